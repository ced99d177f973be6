/**
 * Measures the tunnel multiplexer candidates on loopback, in one run:
 *   - stream open time (server opens, agent accepts, server sees it ready),
 *   - bulk throughput of one stream (server -> agent),
 *   - server-side memory per idle tunnel (500 tunnels held by a child process).
 *
 *   node --expose-gc --import tsx bench/mux/run.ts [--tunnels 500] [--megabytes 128]
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
  },
});
const TUNNELS = Number(values.tunnels);
const BULK_BYTES = Number(values.megabytes) * 1024 * 1024;
const OPENS = Number(values.opens);

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  process.stderr.write('run with node --expose-gc so memory figures are after collection\n');
  process.exit(2);
}

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
    const stream = await end.open();
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
  await finished;
  const seconds = (performance.now() - started) / 1000;
  stream.destroy();
  end.close();
  return { mibPerSecond: BULK_BYTES / 1024 / 1024 / seconds };
}

function memory() {
  gc!();
  gc!();
  const usage = process.memoryUsage();
  return { rss: usage.rss, heap: usage.heapUsed + usage.external + usage.arrayBuffers };
}

async function measureIdle(candidate: Candidate) {
  const ends: ServerEnd[] = [];
  const before = memory();
  let established = 0;
  let allUp: () => void = () => {};
  const up = new Promise<void>((resolve) => {
    allUp = resolve;
  });
  const onConnection = (ws: WebSocket) => {
    candidate.server(ws).then((end) => {
      ends.push(end);
      if (++established === TUNNELS) allUp();
    });
  };
  wss.on('connection', onConnection);
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      fileURLToPath(new URL('./agent-side.ts', import.meta.url)),
      candidate.name,
      url,
      String(TUNNELS),
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  await up;
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const after = memory();
  wss.off('connection', onConnection);
  for (const end of ends) end.close();
  child.stdin!.end();
  await once(child, 'exit');
  for (const client of wss.clients) client.terminate();
  await new Promise((resolve) => setTimeout(resolve, 500));
  return {
    heapKiBPerTunnel: (after.heap - before.heap) / TUNNELS / 1024,
    rssKiBPerTunnel: (after.rss - before.rss) / TUNNELS / 1024,
  };
}

const results: Record<string, Record<string, number>> = {};
for (const candidate of ALL_CANDIDATES) {
  const row: Record<string, number> = {};
  if (candidate !== bareWebSocket) {
    Object.assign(row, await measureOpen(candidate));
    Object.assign(row, await measureBulk(candidate));
  }
  Object.assign(row, await measureIdle(candidate));
  results[candidate.name] = row;
  process.stderr.write(`${candidate.name}: ${JSON.stringify(row)}\n`);
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
