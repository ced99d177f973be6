/**
 * Child process of bench/mux/run.ts: the server ends of many idle tunnels of one
 * candidate, alone in a fresh process so nothing else measured before skews the heap.
 * Prints one JSON line: heap and RSS growth per tunnel in KiB.
 *
 *   node --expose-gc --import tsx bench/mux/idle-server.ts <candidate> <tunnels>
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { type WebSocket, WebSocketServer } from 'ws';
import { ALL_CANDIDATES, type ServerEnd } from './candidates';

const [name, countText] = process.argv.slice(2);
const candidate = ALL_CANDIDATES.find((c) => c.name === name);
const gc = (globalThis as { gc?: () => void }).gc;
if (!candidate || !countText || !gc) {
  process.stderr.write('usage: node --expose-gc --import tsx idle-server.ts <candidate> <tunnels>\n');
  process.exit(2);
}
const count = Number(countText);
const agentSide = fileURLToPath(new URL('./agent-side.ts', import.meta.url));

const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
await once(wss, 'listening');
const url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;

/** Connects `n` agents and resolves with their server ends once every one is up. */
async function hold(n: number) {
  const ends: ServerEnd[] = [];
  const up = new Promise<void>((resolve) => {
    const onConnection = (ws: WebSocket) => {
      candidate!.server(ws).then((end) => {
        ends.push(end);
        if (ends.length === n) {
          wss.off('connection', onConnection);
          resolve();
        }
      });
    };
    wss.on('connection', onConnection);
  });
  const child = spawn(process.execPath, ['--import', 'tsx', agentSide, candidate!.name, url, String(n)], {
    stdio: ['pipe', 'ignore', 'inherit'],
  });
  await up;
  return {
    ends,
    async release() {
      for (const end of ends) end.close();
      child.stdin!.end();
      await once(child, 'exit');
      for (const client of wss.clients) client.terminate();
    },
  };
}

function memory() {
  gc!();
  gc!();
  const usage = process.memoryUsage();
  return { rss: usage.rss, heap: usage.heapUsed + usage.external + usage.arrayBuffers };
}

// A first round warms code paths and lazily created state (JIT, ws and http2 internals).
const warm = await hold(20);
await warm.release();
await new Promise((resolve) => setTimeout(resolve, 300));
const before = memory();
const held = await hold(count);
await new Promise((resolve) => setTimeout(resolve, 1000));
const after = memory();
process.stdout.write(
  `${JSON.stringify({
    heapKiBPerTunnel: (after.heap - before.heap) / count / 1024,
    rssKiBPerTunnel: (after.rss - before.rss) / count / 1024,
  })}\n`,
);
await held.release();
process.exit(0);
