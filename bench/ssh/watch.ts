/**
 * What watching a live session costs the session, and how far behind the watcher is (the goals: under 2 % of the
 * session's throughput with one and with ten watchers, against none; under 250 ms from the device's output to the
 * watcher). The server and an agent run in their own processes, as `npm start` and install.sh start them; the
 * watchers read `GET /api/sessions/{uid}/live` from this process, on a second instance of the installation when
 * TEST_DATABASE_URL and TEST_REDIS_URL are set (through Redis, as across a scale-out), else on the same server.
 *
 * Throughput: `ssh -tt` prints `--mb` megabytes through the gateway with recording on, with 0, 1 and 10 watchers
 * in rounds whose order turns, so a trend in the machine's load favours none; the output starts after a pause in
 * which the watchers join, and its time runs from its first byte at the client to the end. Besides the wall time
 * the server's CPU seconds per run are given, steadier on a two-core machine.
 *
 * Delay: in an interactive shell with one watcher, a line is typed `--marks` times; for each, the time from typing
 * to the client showing its output and to the watcher receiving it.
 *
 * Usage: `TEST_DATABASE_URL=postgres://... TEST_REDIS_URL=redis://... npx tsx bench/ssh/watch.ts [--rounds 5]
 * [--mb 32] [--marks 30]`
 */
import { spawn } from 'node:child_process';
import { Terminal } from '../../test/support/terminal';
import { loadAverage, processCpuSeconds } from './proc';
import { ptyOutput, setRecording, settled } from './recording-pairs';
import { median } from './timing';
import { ProcessWorld } from './world';

const arg = (name: string) =>
  process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined;
const rounds = Number(arg('--rounds') ?? 5) || 5;
const megabytes = Number(arg('--mb') ?? 32) || 32;
const marks = Number(arg('--marks') ?? 30) || 30;
const PAUSE_S = 3;

/** One watcher's stream: counts what it received, and calls `heard` with each piece of decoded output. */
class Watcher {
  bytes = 0;
  synced = false;
  private readonly abort = new AbortController();
  constructor(private readonly heard?: (text: string) => void) {}

  async open(base: string, uid: string, token: string): Promise<void> {
    const response = await fetch(`${base}/api/sessions/${uid}/live`, {
      headers: { authorization: `Bearer ${token}` },
      signal: this.abort.signal,
    });
    if (response.status !== 200 || !response.body) throw new Error(`watching answered ${response.status}`);
    void this.read(response.body);
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of body) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const data = /^data: (.*)$/m.exec(buffer.slice(0, end))?.[1];
          buffer = buffer.slice(end + 2);
          if (!data) continue;
          const message = JSON.parse(data) as { type: string; data?: string };
          if (message.type === 'watchers') this.synced = true;
          if (message.type === 'out' && message.data) {
            const bytes = Buffer.from(message.data, 'base64');
            this.bytes += bytes.length;
            this.heard?.(bytes.toString('utf8'));
          }
        }
      }
    } catch {
      // Closed.
    }
  }

  close(): void {
    this.abort.abort();
  }
}

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function liveSession(world: ProcessWorld): Promise<string> {
  let uid: string | undefined;
  await until(async () => {
    const res = await world.api('GET', '/api/sessions?active=true&per_page=10');
    const list = (Array.isArray(res.body) ? res.body : []) as { uid: string; recorded: boolean }[];
    uid = list.find((s) => s.recorded)?.uid;
    return uid !== undefined;
  }, 'the live session');
  return uid as string;
}

const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.95) - 1] as number;

async function main(): Promise<void> {
  console.log(`load average at start: ${loadAverage()}`);
  const world = await ProcessWorld.start();
  try {
    const shared = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);
    const via = shared ? await world.startSharingServer() : world.server;
    console.log(`watchers on ${shared ? 'a second instance, through Redis' : 'the same server'}`);
    await setRecording(world, true);
    const key = await world.keyForEveryHost('bench');
    const destination = [
      ...world.clientOptions(key.file),
      '-p',
      String(world.sshPort),
      `${world.target()}@127.0.0.1`,
    ];
    const [serverPid = 0] = world.pids;

    /** One printing session with `count` watchers: ms from its first output byte to its end, and server CPU s. */
    const printing = async (count: number) => {
      const args = ptyOutput(destination, megabytes * 1_000_000);
      args[args.length - 1] = `sleep ${PAUSE_S}; ${args.at(-1)}`;
      const child = spawn('ssh', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let first = 0n;
      let received = 0;
      child.stdout.on('data', (chunk: Buffer) => {
        if (first === 0n && chunk.includes(0x78)) first = process.hrtime.bigint();
        received += chunk.length;
      });
      const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
      const uid = await liveSession(world);
      const watchers = Array.from({ length: count }, () => new Watcher());
      await Promise.all(watchers.map((w) => w.open(via.url, uid, world.owner.token)));
      await until(() => watchers.every((w) => w.synced), 'the watchers to join', PAUSE_S * 1000);
      const cpuBefore = processCpuSeconds(serverPid);
      const code = await closed;
      const end = process.hrtime.bigint();
      const cpu = processCpuSeconds(serverPid) - cpuBefore;
      if (code !== 0) throw new Error(`ssh exited ${code}`);
      if (first === 0n || received < megabytes * 1_000_000)
        throw new Error(`the client received ${received} bytes`);
      // Each watcher received the whole output too (what it got after the session, it got in time as well).
      await until(
        () => watchers.every((w) => w.bytes >= megabytes * 1_000_000),
        'the watchers to have it all',
      );
      for (const w of watchers) w.close();
      await settled(world);
      return { ms: Number(end - first) / 1e6, cpu };
    };

    const counts = [0, 1, 10];
    await printing(0);
    await printing(1);
    const results = new Map<number, { ms: number[]; cpu: number[] }>(
      counts.map((c) => [c, { ms: [], cpu: [] }]),
    );
    for (let round = 0; round < rounds; round++) {
      const order = counts.map((_, i) => counts[(i + round) % counts.length] as number);
      const line: string[] = [];
      for (const count of order) {
        const r = await printing(count);
        results.get(count)?.ms.push(r.ms);
        results.get(count)?.cpu.push(r.cpu);
        line.push(`${count}: ${r.ms.toFixed(0)} ms, ${r.cpu.toFixed(2)} s CPU`);
      }
      console.log(`round ${round + 1}: ${line.join(' | ')}`);
    }
    const base = results.get(0) as { ms: number[]; cpu: number[] };
    console.log(`\n${megabytes} MB of PTY output, recording on, median of ${rounds}:`);
    console.log('| watchers | time | against none | server CPU | against none |');
    console.log('|---|---|---|---|---|');
    for (const count of counts) {
      const r = results.get(count) as { ms: number[]; cpu: number[] };
      const ratio = (xs: number[], ys: number[]) => (median(xs) / median(ys)).toFixed(3);
      console.log(
        `| ${count} | ${median(r.ms).toFixed(0)} ms | ${ratio(r.ms, base.ms)} | ${median(r.cpu).toFixed(2)} s | ${ratio(r.cpu, base.cpu)} |`,
      );
    }

    // The delay: an interactive shell, one watcher.
    const term = new Terminal([...destination.slice(0, -1), '-tt', destination.at(-1) as string], {
      cols: 100,
      rows: 30,
    });
    await term.waitFor(/[#$] $/);
    const uid = await liveSession(world);
    let watched = '';
    const seenAt = new Map<string, bigint>();
    const watcher = new Watcher((text) => {
      watched += text;
      for (const m of watched.matchAll(/mark-(\d+)-done/g)) {
        if (!seenAt.has(m[1] as string)) seenAt.set(m[1] as string, process.hrtime.bigint());
      }
      watched = watched.slice(-200);
    });
    await watcher.open(via.url, uid, world.owner.token);
    await until(() => watcher.synced, 'the watcher to join');
    const toClient: number[] = [];
    const toWatcher: number[] = [];
    for (let i = 0; i < marks; i++) {
      const from = term.output.length;
      const typed = process.hrtime.bigint();
      term.type(`echo mark-${i}-$((1))one | sed s/1one/done/\r`);
      await term.waitFor(new RegExp(`mark-${i}-done`), from);
      toClient.push(Number(process.hrtime.bigint() - typed) / 1e6);
      await until(() => seenAt.has(String(i)), `mark ${i} on the watcher`, 10_000);
      toWatcher.push(Number((seenAt.get(String(i)) as bigint) - typed) / 1e6);
      await new Promise((r) => setTimeout(r, 100));
    }
    watcher.close();
    term.type('exit\r');
    await term.exited;
    const lag = toWatcher.map((w, i) => w - (toClient[i] as number));
    console.log(`\nDelay over ${marks} typed lines (typing to output, through the gateway and the device):`);
    console.log('| to | p50 | p95 |');
    console.log('|---|---|---|');
    console.log(`| the ssh client | ${median(toClient).toFixed(1)} ms | ${p95(toClient).toFixed(1)} ms |`);
    console.log(`| the watcher | ${median(toWatcher).toFixed(1)} ms | ${p95(toWatcher).toFixed(1)} ms |`);
    console.log(
      `| the watcher after the client | ${median(lag).toFixed(1)} ms | ${p95(lag).toFixed(1)} ms |`,
    );
    console.log(`load average at end: ${loadAverage()}`);
  } finally {
    await world.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
