import { expect } from 'chai';
import pg from 'pg';
import type { Browser, Page } from 'playwright-core';
import { dropDatabase, freshDatabase } from '../../support/server';
import { completeSetup, expectAccessible, launchBrowser } from './support/browser';
import { type ConsoleServer, startConsoleServer } from './support/console-server';

// With PostgreSQL away, signed-in calls once answered 401 and the console signed everyone out. The server now
// answers 503 and the console keeps the person signed in, says why screens do not load, and recovers by itself.

async function admin(sql: string, params: unknown[] = []): Promise<void> {
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(sql, params);
  } finally {
    await client.end();
  }
}

(process.env.TEST_DATABASE_URL ? describe : describe.skip)(
  'web console: the server loses its database (needs TEST_DATABASE_URL)',
  function () {
    this.timeout(120_000);
    let server: ConsoleServer;
    let browser: Browser;
    let page: Page;
    let database: string;
    let name: string;

    before(async () => {
      // A database of this test's own, so taking it away touches nothing else.
      database = (await freshDatabase()) as string;
      name = new URL(database).pathname.slice(1);
      [server, browser] = await Promise.all([
        startConsoleServer({ env: { GATEHOUSE_DATABASE_URL: database } }),
        launchBrowser(),
      ]);
      page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
      await completeSetup(page, server.setupUrl);
      await page.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
    });
    after(async () => {
      await admin(`alter database ${name} allow_connections true`).catch(() => {});
      await browser?.close();
      await server?.stop();
      await dropDatabase(database);
    });

    it('keeps the person signed in through 503s, says why, and carries on once the database is back', async () => {
      await admin(`alter database ${name} allow_connections false`);
      await admin('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [name]);

      await page.getByRole('link', { name: 'Devices' }).first().click();
      const notice = page.getByText('The server cannot reach its database right now.', { exact: true });
      await notice.waitFor();
      expect(await page.getByRole('button', { name: 'Sign in' }).count(), 'no sign-in screen').to.equal(0);
      expect(
        await page.evaluate('localStorage.getItem("gatehouse.auth") !== null'),
        'the session is kept',
      ).to.equal(true);
      await expectAccessible(page, 'devices while the database is away');

      await admin(`alter database ${name} allow_connections true`);
      await notice.waitFor({ state: 'detached', timeout: 30_000 });
      await page.getByRole('link', { name: 'Sessions' }).first().click();
      await page.getByText('No sessions yet').waitFor();
      expect(await page.getByRole('button', { name: 'Sign in' }).count()).to.equal(0);
    });
  },
);
