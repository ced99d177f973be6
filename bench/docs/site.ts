/// <reference lib="dom" />
// Docs site figures for bench/RESULTS.md: clean build time, transfer size of three pages
// through the compressing static server, and search latency (cold: first query fetches
// the index; warm: the next query). Run: npx tsx bench/docs/site.ts
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { buildDir, docsDir, launchChromium, startDocsServer } from '../../test/e2e/docs/docs-site';

const started = performance.now();
rmSync(buildDir, { recursive: true, force: true });
rmSync(join(docsDir, '.docusaurus'), { recursive: true, force: true });
rmSync(join(docsDir, 'node_modules', '.cache'), { recursive: true, force: true });
execFileSync('npm', ['run', 'build', '-w', 'docs'], { cwd: join(docsDir, '..'), stdio: 'ignore' });
const buildSeconds = (performance.now() - started) / 1000;

const server = await startDocsServer();
const browser = await launchChromium();
const rows: string[] = [];
try {
  for (const route of ['/', '/user-guides/devices/connecting', '/developers/openapi/community']) {
    const context = await browser.newContext();
    const page = await context.newPage();
    const responses: Promise<number>[] = [];
    page.on('response', (response) => {
      responses.push(
        response
          .request()
          .sizes()
          .then((s) => s.responseBodySize + s.responseHeadersSize),
      );
    });
    await page.goto(server.url + route, { waitUntil: 'networkidle' });
    const bytes = (await Promise.all(responses)).reduce((a, b) => a + b, 0);
    rows.push(`| ${route} | ${responses.length} | ${(bytes / 1024).toFixed(0)} KiB |`);
    await context.close();
  }

  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${server.url}/overview/faq`, { waitUntil: 'networkidle' });
  const timeQuery = async (query: string) => {
    await page.getByRole('button', { name: 'Search' }).click();
    const box = page.getByRole('dialog').getByRole('searchbox');
    const t0 = Date.now();
    await box.fill(query);
    await page.getByRole('dialog').getByRole('link').first().waitFor();
    const ms = Date.now() - t0;
    await page.keyboard.press('Escape');
    return ms;
  };
  const cold = await timeQuery('tenant');
  const warm = await timeQuery('firewall');
  console.log(`build (clean, Rspack): ${buildSeconds.toFixed(1)} s`);
  console.log('| page | requests | transferred |\n|---|---|---|');
  console.log(rows.join('\n'));
  console.log(`search latency: cold ${cold} ms, warm ${warm} ms`);
  await context.close();
} finally {
  await browser.close();
  await server.stop();
}
