import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { apiAt } from '../../../support/server';
import { registerDevice } from '../../../support/tenants';
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

/** What the owner's calls need: the server's address and the owner's token and tenant. */
export interface OwnerSide {
  server: { url: string };
  auth: { token: string; tenant: string };
}

/** The operator and observer that role tests add next to the owner. */
export const team = {
  operator: { username: 'grace', password: 'grace-operator-pass' },
  observer: { username: 'olive', password: 'olive-observer-pass' },
} as const;

/** The API as the signed-in owner: each call must answer 200, and its JSON body is the result. */
export function ownerApi(signedIn: OwnerSide) {
  const api = apiAt(signedIn.server.url);
  return async (method: string, p: string, body?: unknown) => {
    const answer = await api(method, p, { token: signedIn.auth.token, body });
    expect(answer.status, `${method} ${p}: ${JSON.stringify(answer.body)}`).to.equal(200);
    return answer.body;
  };
}

/** Adds `team`'s operator and observer to the owner's namespace, each named by `name(role)`. */
export async function addTeam(
  signedIn: OwnerSide,
  name: (role: keyof typeof team) => string = (role) => role,
): Promise<void> {
  const api = ownerApi(signedIn);
  for (const role of ['operator', 'observer'] as const) {
    const { username, password } = team[role];
    const email = `${username}@example.com`;
    await api('POST', '/api/admin/users', { username, email, password, name: name(role) });
    await api('POST', `/api/namespaces/${signedIn.auth.tenant}/members`, { email, role });
  }
}

/** Registers a device in the owner's namespace through the agent's own call; answers its uid. */
export async function registerInConsole(
  signedIn: OwnerSide,
  device: { hostname: string; mac: string; keyLabel?: string; os?: { id: string; pretty_name: string } },
): Promise<string> {
  const registered = await registerDevice(
    { api: apiAt(signedIn.server.url) },
    { tenant: signedIn.auth.tenant, keyLabel: device.hostname, ...device },
  );
  return registered.uid;
}
