/**
 * Measures the tunnel multiplexer candidates on loopback, in one run:
 *   - stream open time (server opens, agent accepts, server sees it ready),
 *   - bulk throughput of one stream (server -> agent),
 *   - server-side memory per idle tunnel (500 tunnels; server ends in a fresh process,
 *     agent ends in another).
 *
 *   node --import tsx bench/mux/run.ts [--tunnels 500] [--megabytes 128] [--opens 2000] [--repeat 3]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { WebSocket, WebSocketServer } from 'ws';
import { ALL_CANDIDATES, bareWebSocket, CANDIDATES, type Candidate, type ServerEnd } from './candidates';

const { values } = parseArgs({
  options: {
    tunnels: { type: 'string', default: '500' },
    megabytes: { type: 'string', default: '128' },
    opens: { type: 'string', default: '2000' },
    repeat: { type: 'string', default: '3' },
  },
});
const TUNNELS = Number(values.tunnels);
const BULK_BYTES = Number(values.megabytes) * 1024 * 1024;
const OPENS = Number(values.opens);
const REPEAT = Number(values.repeat);

const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
await once(wss, 'listening');
const url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;

/** One tunnel with both ends in this process. */
async function connectPair(candidate: Candidate, onStream: (stream: Duplex) => void): Promise<ServerEnd> {
  const serverEnd = new Promise<ServerEnd>((resolve, reject) => {
    wss.once('connection', (ws) => {
      candidate.server(ws).then(resolve, reject);
    });
  });
  const ws = new WebSocket(url, { perMessageDeflate: false });
  candidate.agent(ws, (stream) => {
    stream.on('error', () => {});
    onStream(stream);
  });
  return serverEnd;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Fails loudly instead of hanging when a candidate stops answering. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) =>
      setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms).unref(),
    ),
  ]);
}

async function measureOpen(candidate: Candidate) {
  // Streams are ended, not reset: Node's HTTP/2 server treats a burst of opened and
  // cancelled streams as a rapid-reset attack and closes the session.
  const end = await connectPair(candidate, (stream) => {
    stream.resume();
    stream.on('end', () => stream.end());
  });
  const times: number[] = [];
  for (let i = 0; i < OPENS + 100; i++) {
    const started = performance.now();
    const stream = await within(end.open(), 5000, `${candidate.name} open #${i}`);
    const took = performance.now() - started;
    if (i >= 100) times.push(took); // the first hundred warm the JIT
    stream.on('error', () => {});
    stream.resume();
    stream.end();
  }
  end.close();
  times.sort((a, b) => a - b);
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  return { meanMs: mean, p50Ms: percentile(times, 50), p99Ms: percentile(times, 99) };
}

async function measureBulk(candidate: Candidate) {
  let received = 0;
  let done: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    done = resolve;
  });
  const end = await connectPair(candidate, (stream) => {
    stream.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received >= BULK_BYTES) done();
    });
  });
  const stream = await end.open();
  stream.on('error', () => {});
  const chunk = Buffer.alloc(64 * 1024, 7);
  const started = performance.now();
  for (let sent = 0; sent < BULK_BYTES; sent += chunk.length) {
    if (!stream.write(chunk)) await once(stream, 'drain');
  }
  await within(finished, 60_000, `${candidate.name} bulk`);
  const seconds = (performance.now() - started) / 1000;
  stream.destroy();
  end.close();
  return { mibPerSecond: BULK_BYTES / 1024 / 1024 / seconds };
}

/** Runs the idle measurement in a fresh process per candidate (see idle-server.ts). */
async function measureIdle(candidate: Candidate) {
  const child = spawn(
    process.execPath,
    [
      '--expose-gc',
      '--import',
      'tsx',
      fileURLToPath(new URL('./idle-server.ts', import.meta.url)),
      candidate.name,
      String(TUNNELS),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  await within(once(child, 'exit'), 120_000, `${candidate.name} idle`);
  return JSON.parse(output.trim()) as { heapKiBPerTunnel: number; rssKiBPerTunnel: number };
}

/** Median of each figure over REPEAT runs: this machine is shared and its load varies. */
function medianRow(rows: Record<string, number>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const key of Object.keys(rows[0] ?? {})) {
    const sorted = rows.map((row) => row[key]!).sort((a, b) => a - b);
    out[key] = sorted[Math.floor(sorted.length / 2)]!;
  }
  return out;
}

const results: Record<string, Record<string, number>> = {};
for (const candidate of ALL_CANDIDATES) {
  const rows: Record<string, number>[] = [];
  for (let run = 0; run < REPEAT; run++) {
    const row: Record<string, number> = {};
    if (candidate !== bareWebSocket) {
      Object.assign(row, await measureOpen(candidate));
      Object.assign(row, await measureBulk(candidate));
    }
    Object.assign(row, await measureIdle(candidate));
    process.stderr.write(`${candidate.name} run ${run + 1}: ${JSON.stringify(row)}\n`);
    rows.push(row);
  }
  results[candidate.name] = medianRow(rows);
}

const fmt = (n: number | undefined, digits = 3) => (n === undefined ? '-' : n.toFixed(digits));
const ours = results['gatehouse-mux']!;
console.log(
  `\nNode ${process.version}, ${TUNNELS} idle tunnels, ${BULK_BYTES / 1024 / 1024} MiB bulk, ${OPENS} opens\n`,
);
console.log(
  '| candidate | open mean ms | open p50 ms | open p99 ms | bulk MiB/s | heap KiB/idle tunnel | RSS KiB/idle tunnel |',
);
console.log('|---|---|---|---|---|---|---|');
for (const [name, row] of Object.entries(results)) {
  console.log(
    `| ${name} | ${fmt(row['meanMs'])} | ${fmt(row['p50Ms'])} | ${fmt(row['p99Ms'])} | ${fmt(row['mibPerSecond'], 0)} | ${fmt(row['heapKiBPerTunnel'], 1)} | ${fmt(row['rssKiBPerTunnel'], 1)} |`,
  );
}
console.log('\nRatios against gatehouse-mux (>1 means gatehouse-mux is better):');
for (const candidate of CANDIDATES) {
  if (candidate.name === 'gatehouse-mux') continue;
  const row = results[candidate.name]!;
  console.log(
    `  ${candidate.name}: open time x${fmt(row['meanMs']! / ours['meanMs']!, 2)}, ` +
      `throughput x${fmt(ours['mibPerSecond']! / row['mibPerSecond']!, 2)}, ` +
      `idle heap x${fmt(row['heapKiBPerTunnel']! / ours['heapKiBPerTunnel']!, 2)}`,
  );
}
wss.close();
process.exit(0);
