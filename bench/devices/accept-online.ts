/**
 * Accept-to-online latency: a real agent (default 30 s interval) registers, is pending, and is
 * accepted through the API; the figure is the time from the accept call to the API answering `online: true`.
 * Baseline in the same run: the same agent against a server whose acceptance wait is not served (as an older server),
 * so it falls back to its timer, which was the only way before.
 * Usage: node --import tsx bench/devices/accept-online.ts [runs] [baseline-runs]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { definePlugin } from '@gatehouse/core';
import { AgentProcess } from '../../test/support/agent-process';
import { startServer, type TestServer } from '../../test/support/server';

const runs = Number(process.argv[2] ?? 5);
const baselineRuns = Number(process.argv[3] ?? 3);

/** Answers the acceptance wait with 404, as a server without it: the agent keeps its timer. */
const withoutWait = definePlugin({
  name: 'bench-without-wait',
  dependsOn: ['community'],
  register(ctx) {
    ctx.middleware(async (koa, next) => {
      if (koa.path === '/api/devices/auth/wait') {
        koa.status = 404;
        koa.body = { message: 'not found' };
        return;
      }
      await next();
    });
  },
});

async function once(
  server: TestServer,
  token: string,
  tenant: string,
  keys: string,
  n: number,
): Promise<number> {
  const agent = AgentProcess.device({
    server: server.url,
    tenant,
    keyPath: path.join(keys, `bench-${n}.key`),
    identity: `02:00:00:00:50:${n.toString(16).padStart(2, '0')}`,
    hostname: `bench-${n}`,
    keepalive: 30,
  });
  try {
    await agent.waitFor(/pending acceptance/, 30_000);
    const uid = await agent.uid();
    // The agent holds its wait (or sleeps on its timer) by now.
    await new Promise((r) => setTimeout(r, 1000));
    const started = performance.now();
    const accepted = await server.api('PATCH', `/api/devices/${uid}/accept`, { token });
    if (accepted.status !== 200) throw new Error(`accept answered ${accepted.status}`);
    for (;;) {
      const d = await server.api('GET', `/api/devices/${uid}`, { token });
      if (d.body.online) return performance.now() - started;
      if (performance.now() - started > 90_000) throw new Error('not online within 90 s');
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await agent.stop();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function series(
  label: string,
  count: number,
  extra: Parameters<typeof startServer>[0],
): Promise<number[]> {
  const server = await startServer({ ssh: false, ...extra });
  const keys = mkdtempSync(path.join(tmpdir(), 'gatehouse-bench-accept-'));
  try {
    const me = await server.setup();
    const times: number[] = [];
    for (let i = 0; i < count; i++) {
      times.push(await once(server, me.token, me.tenant, keys, i + 1));
      process.stderr.write(`${label} run ${i + 1}: ${Math.round(times.at(-1) ?? 0)} ms\n`);
    }
    return times;
  } finally {
    await server.stop();
    rmSync(keys, { recursive: true, force: true });
  }
}

const waited = await series('acceptance wait', runs, {});
const timer = await series('timer only (baseline)', baselineRuns, { extraPlugins: [withoutWait] });
const fmt = (xs: number[]) => xs.map((x) => Math.round(x)).join(', ');
console.log('| agent | median accept-to-online | runs (ms) | ratio to baseline |');
console.log('|---|---|---|---|');
console.log(
  `| holds the acceptance wait | ${Math.round(median(waited))} ms | ${fmt(waited)} | ${(median(waited) / median(timer)).toFixed(3)} |`,
);
console.log(
  `| timer only, 30 s interval (baseline) | ${Math.round(median(timer))} ms | ${fmt(timer)} | 1.000 |`,
);
