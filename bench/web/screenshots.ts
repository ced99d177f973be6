/**
 * Screenshots of the console of a checkout, as a person sees it with a small fleet: Home, the device list (the
 * accepted and pending tabs) and the firewall's new-rule form, at 1280 and 390 px. For before-and-after pictures of a
 * console change: run it on both checkouts and compare the files.
 *
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
 *     node --import tsx bench/web/screenshots.ts <checkout> <out-dir> <label>
 *
 * The checkout runs as its own server process (its console built), on a fresh database, with five devices
 * registered and two of them accepted. Files are `<out-dir>/<label>-<screen>-<width>.png`.
 */
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { agentAuthRequest } from '../../test/support/device-keys';
import { dropDatabase } from '../../test/support/server';
import { serverPlace, signUp, startCheckout, stopCheckout } from '../store/checkout-server';

const [checkout, outDir, label] = process.argv.slice(2);
if (!checkout || !outDir || !label) throw new Error('usage: screenshots.ts <checkout> <out-dir> <label>');
mkdirSync(outDir, { recursive: true });

const { databaseUrl, dataDir, url, env } = await serverPlace('gatehouse-screenshots-');
const { child } = await startCheckout(path.resolve(checkout), env, url);
try {
  const login = await signUp(path.resolve(checkout), env, url);
  const uids: string[] = [];
  for (const [i, hostname] of ['web-01', 'web-02', 'db-01', 'edge-gw', 'build-runner'].entries()) {
    const req = agentAuthRequest({
      tenant: login.tenant,
      hostname,
      mac: `02:00:00:00:00:0${i + 1}`,
      keyLabel: `screenshots-${label}-${i}`,
    });
    const res = await fetch(`${url}/api/devices/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...req.headers },
      body: JSON.stringify(req.body),
    });
    if (!res.ok) throw new Error(`registering ${hostname} answered ${res.status}`);
    uids.push(((await res.json()) as { uid: string }).uid);
  }
  for (const uid of uids.slice(0, 2)) {
    const res = await fetch(`${url}/api/devices/${uid}/accept`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${login.token}` },
    });
    if (!res.ok) throw new Error(`accepting answered ${res.status}`);
  }
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });
  try {
    for (const width of [1280, 390]) {
      const context = await browser.newContext({ viewport: { width, height: width === 1280 ? 800 : 844 } });
      // Signed in as the console keeps a sign-in, so both checkouts start on the same screen.
      await context.addInitScript((auth) => localStorage.setItem('gatehouse.auth', JSON.stringify(auth)), {
        token: login.token,
        tenant: login.tenant,
        user: 'bench',
      });
      const page = await context.newPage();
      const shot = async (screen: string) => {
        await page.waitForLoadState('networkidle').catch(() => undefined);
        await page.waitForTimeout(500);
        await page.screenshot({
          path: path.join(outDir, `${label}-${screen}-${width}.png`),
          fullPage: width === 390,
        });
      };
      for (const [screen, p] of [
        ['home', '/'],
        ['devices', '/devices'],
        ['devices-pending', '/devices/pending'],
      ] as const) {
        await page.goto(url + p);
        await shot(screen);
      }
      await page.goto(`${url}/firewall`);
      await page.getByRole('button', { name: 'Add rule' }).first().click();
      await page.getByRole('dialog').waitFor();
      await shot('firewall-add');
      await context.close();
    }
  } finally {
    await browser.close();
  }
} finally {
  await stopCheckout(child);
  await dropDatabase(databaseUrl);
  rmSync(dataDir, { recursive: true, force: true });
}
