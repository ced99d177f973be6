// Figure: JavaScript a browser downloads for the console's first screen (sign-in) and for the first view
// after signing in (home), gzip-compressed as a gzip-serving proxy would send it.
// Run: node --import tsx bench/web/first-screen.ts
import { gzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { completeSetup, launchBrowser } from '../../test/e2e/web/support/browser';
import { ensureConsoleBuilt, startConsoleServer } from '../../test/e2e/web/support/console-server';

interface Shipped {
  files: number;
  raw: number;
  gzip: number;
}

async function scriptsLoadedWhile(page: Page, action: () => Promise<void>): Promise<Shipped> {
  const seen = new Map<string, Buffer>();
  const onResponse = async (response: import('playwright-core').Response) => {
    if (response.request().resourceType() !== 'script') return;
    seen.set(response.url(), await response.body());
  };
  page.on('response', onResponse);
  await action();
  await page.waitForLoadState('networkidle');
  page.off('response', onResponse);
  let raw = 0;
  let gzip = 0;
  for (const body of seen.values()) {
    raw += body.length;
    gzip += gzipSync(body, { level: 9 }).length;
  }
  return { files: seen.size, raw, gzip };
}

const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;

ensureConsoleBuilt();
const server = await startConsoleServer();
const browser = await launchBrowser();
try {
  const context = await browser.newContext();
  const page = await context.newPage();
  const setup = await scriptsLoadedWhile(page, async () => {
    await page.goto(server.setupUrl);
    await page.getByLabel('Full name').waitFor();
  });
  await completeSetup(page, server.setupUrl);
  await page.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
  await context.clearCookies();
  const fresh = await browser.newContext();
  const signInPage = await fresh.newPage();
  const signIn = await scriptsLoadedWhile(signInPage, async () => {
    await signInPage.goto(server.url);
    await signInPage.getByRole('heading', { name: 'Sign in to Gatehouse' }).waitFor();
  });
  const home = await scriptsLoadedWhile(signInPage, async () => {
    await signInPage.getByLabel('Username or email').fill('ada');
    await signInPage.getByLabel('Password').fill('correct-horse');
    await signInPage.getByRole('button', { name: 'Sign in' }).click();
    await signInPage.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
  });
  console.log('| screen | script files | raw | gzip |');
  console.log('|---|---|---|---|');
  console.log(`| first-run setup | ${setup.files} | ${kib(setup.raw)} | ${kib(setup.gzip)} |`);
  console.log(`| sign-in (first screen) | ${signIn.files} | ${kib(signIn.raw)} | ${kib(signIn.gzip)} |`);
  console.log(`| home after sign-in (added) | ${home.files} | ${kib(home.raw)} | ${kib(home.gzip)} |`);
} finally {
  await browser.close();
  await server.stop();
}
