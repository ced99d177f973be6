// Lighthouse performance and accessibility of the docs site (median of 3 runs) for each page type: the home
// page, a guide, the API reference, a developers page and a page of the older 0.1 release, for bench/RESULTS.md. Uses the existing build
// (run `npm run docs:build` first), the compressing static server `npm run docs:serve`
// runs, and Debian Chromium.
//   npx tsx bench/docs/lighthouse.ts            Lighthouse's default: mobile, simulated slow 4G, 4x CPU slowdown
//   npx tsx bench/docs/lighthouse.ts desktop    Lighthouse's desktop preset
//   npx tsx bench/docs/lighthouse.ts mobile /   the named pages only (after the preset)
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { startDocsServer } from '../../test/e2e/docs/docs-site';

const run = promisify(execFile);
const lighthouse = resolve(import.meta.dirname, '../../node_modules/.bin/lighthouse');
const preset = process.argv[2] === 'desktop' ? 'desktop' : 'mobile';
const pageTypes = [
  '/',
  '/user-guides/devices/connecting',
  '/developers/openapi/community',
  '/developers/architecture',
  '/0.1/user-guides/devices/connecting',
];
const pages = process.argv.length > 3 ? process.argv.slice(3) : pageTypes;
const runs = 3;
const chromeFlags = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
].join(' ');

interface Report {
  categories: Record<string, { score: number | null }>;
  audits: Record<string, { numericValue?: number }>;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

const loadAtStart = loadavg()[0]?.toFixed(1);
const server = await startDocsServer();
const out = mkdtempSync(join(tmpdir(), 'gatehouse-lighthouse-'));
const rows: string[] = [];
try {
  for (const page of pages) {
    const scores = { performance: [] as number[], accessibility: [] as number[] };
    const metrics = { lcp: [] as number[], tbt: [] as number[], cls: [] as number[] };
    for (let i = 0; i < runs; i++) {
      const file = join(out, `run-${i}.json`);
      await run(
        lighthouse,
        [
          server.url + page,
          '--only-categories=performance,accessibility',
          `--chrome-flags=${chromeFlags}`,
          '--output=json',
          `--output-path=${file}`,
          '--quiet',
          ...(preset === 'desktop' ? ['--preset=desktop'] : []),
        ],
        { env: { ...process.env, CHROME_PATH: process.env.CHROME_PATH ?? '/usr/bin/chromium' } },
      );
      const report = JSON.parse(readFileSync(file, 'utf8')) as Report;
      scores.performance.push(Math.round((report.categories.performance?.score ?? 0) * 100));
      scores.accessibility.push(Math.round((report.categories.accessibility?.score ?? 0) * 100));
      metrics.lcp.push(report.audits['largest-contentful-paint']?.numericValue ?? NaN);
      metrics.tbt.push(report.audits['total-blocking-time']?.numericValue ?? NaN);
      metrics.cls.push(report.audits['cumulative-layout-shift']?.numericValue ?? NaN);
    }
    rows.push(
      `| ${page} | ${median(scores.performance)} (${scores.performance.join(', ')}) | ${median(scores.accessibility)} | ${(median(metrics.lcp) / 1000).toFixed(1)} s | ${median(metrics.tbt).toFixed(0)} ms | ${median(metrics.cls).toFixed(3)} |`,
    );
  }
} finally {
  await server.stop();
  rmSync(out, { recursive: true, force: true });
}
console.log(
  `Lighthouse ${preset}, median of ${runs}; load average (1 min) at the start ${loadAtStart}, at the end ${loadavg()[0]?.toFixed(1)}`,
);
console.log('| page | performance (runs) | accessibility | LCP | TBT | CLS |\n|---|---|---|---|---|---|');
console.log(rows.join('\n'));
