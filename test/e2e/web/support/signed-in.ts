import type { Browser, BrowserContext, Page } from 'playwright-core';
import { completeSetup, launchBrowser } from './browser';
import { type ConsoleServer, startConsoleServer } from './console-server';

/** The owner's authentication as the console keeps it (`localStorage["gatehouse.auth"]`). */
export interface ConsoleAuth {
  token: string;
  tenant: string;
  user: string;
}

/** A real server serving the built console, and Chromium on it with the owner signed in, on Home. */
export interface SignedInConsole {
  server: ConsoleServer;
  browser: Browser;
  context: BrowserContext;
  page: Page;
  auth: ConsoleAuth;
  /** Closes the browser, then stops the server. */
  close(): Promise<void>;
}

/**
 * The start of most console tests: the server and the browser started side by side, a 1280 by 900 page, and the
 * first-run set-up gone through as the owner (Ada) would, up to Home. `clipboard` lets the page read and write the
 * system clipboard (copy buttons, the terminal's paste). A start that fails part way leaves nothing running.
 */
export async function signedInConsole(
  o: {
    server?: Parameters<typeof startConsoleServer>[0];
    clipboard?: boolean;
    deviceScaleFactor?: number;
  } = {},
): Promise<SignedInConsole> {
  const [server, browser] = await Promise.allSettled([startConsoleServer(o.server), launchBrowser()]);
  const close = async () => {
    if (browser.status === 'fulfilled') await browser.value.close();
    if (server.status === 'fulfilled') await server.value.stop();
  };
  try {
    if (server.status === 'rejected') throw server.reason;
    if (browser.status === 'rejected') throw browser.reason;
    const context = await browser.value.newContext({
      viewport: { width: 1280, height: 900 },
      deviceScaleFactor: o.deviceScaleFactor ?? 1,
    });
    if (o.clipboard) {
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.value.url });
    }
    const page = await context.newPage();
    await completeSetup(page, server.value.setupUrl);
    await page.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
    const auth = JSON.parse(
      (await page.evaluate('localStorage.getItem("gatehouse.auth")')) as string,
    ) as ConsoleAuth;
    return { server: server.value, browser: browser.value, context, page, auth, close };
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
}
