/**
 * A client that fills a server's listener with connections that send nothing (core/http/open-files.ts). Opens
 * `--silent N` connections, waits past the first-request grace, opens `--fresh M` more (the one that crosses the
 * sweep's mark starts a sweep), then says how many of each the server closed and whether it still answers.
 * Usage, against a server started with a low limit (`ulimit -n 600; npm start`):
 * `npx tsx bench/http/silent-connections.ts [--url http://127.0.0.1:8080] [--silent 300] [--fresh 20]`.
 */
import { connect, type Socket } from 'node:net';
import { FIRST_REQUEST_GRACE_MS } from '../../core/http/open-files';

const arg = (name: string) =>
  process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined;
const url = new URL(arg('--url') ?? 'http://127.0.0.1:8080');
const silentCount = Number(arg('--silent') ?? 300) || 300;
const freshCount = Number(arg('--fresh') ?? 20) || 20;

const open = (n: number) =>
  Array.from({ length: n }, () => {
    const socket = connect(Number(url.port || 80), url.hostname);
    const closed = { socket, closed: false };
    socket.on('close', () => {
      closed.closed = true;
    });
    socket.on('error', () => {});
    return closed;
  });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const count = (xs: { closed: boolean }[]) => xs.filter((x) => x.closed).length;

const silent = open(silentCount);
await sleep(FIRST_REQUEST_GRACE_MS + 1_000);
const fresh = open(freshCount);
await sleep(1_500);
console.log(
  `silent past the grace, closed: ${count(silent)} of ${silent.length}; opened after, closed: ${count(fresh)} of ${fresh.length}`,
);
const res = await fetch(new URL('/info', url));
console.log(`GET /info meanwhile: ${res.status}`);
for (const { socket } of [...silent, ...fresh]) (socket as Socket).destroy();
