import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { AgentProcess, DEVICE_AGENT_PASSWORD, eventually } from '../../../support/agent-process';
import type { ConsoleServer, startConsoleServer } from './console-server';
import { signedInConsole } from './signed-in';

/** The device password of the agents these tests run (single-user mode, see AgentProcess). */
export const DEVICE_PASSWORD = DEVICE_AGENT_PASSWORD;

/**
 * The real server serving the built console, the owner signed in through first-run setup in Chromium, and a real
 * agent registered, accepted (through the API) and online: the start of every test that needs a device.
 */
export class DeviceWorld {
  server!: ConsoleServer;
  browser!: Browser;
  context!: BrowserContext;
  page!: Page;
  agent!: AgentProcess;
  auth!: { token: string; tenant: string; user: string };
  uid!: string;
  private keys = '';

  static async start(
    opts: {
      hostname?: string;
      deviceScaleFactor?: number;
      server?: Parameters<typeof startConsoleServer>[0];
    } = {},
  ): Promise<DeviceWorld> {
    const world = new DeviceWorld();
    const signedIn = await signedInConsole({
      deviceScaleFactor: opts.deviceScaleFactor ?? 1,
      ...(opts.server ? { server: opts.server } : {}),
    });
    ({ server: world.server, browser: world.browser, context: world.context, page: world.page } = signedIn);
    world.auth = signedIn.auth;
    world.keys = mkdtempSync(path.join(tmpdir(), 'gatehouse-web-agent-'));
    world.agent = AgentProcess.device({
      server: world.server.url,
      tenant: world.auth.tenant,
      keyPath: path.join(world.keys, 'device.key'),
      identity: '02:00:00:00:00:43',
      hostname: opts.hostname ?? 'edge-term',
    });
    await world.agent.waitFor(/pending acceptance/, 30_000);
    world.uid = await world.agent.uid();
    const accepted = await world.api(`/api/devices/${world.uid}/accept`, { method: 'PATCH' });
    if (accepted.status !== 200) throw new Error(`accept answered ${accepted.status}`);
    await eventually(
      async () =>
        ((await (await world.api(`/api/devices/${world.uid}`)).json()) as { online: boolean }).online ||
        undefined,
      'the device to come online',
      30_000,
    );
    return world;
  }

  api(p: string, init: RequestInit = {}): Promise<Response> {
    return fetch(`${this.server.url}${p}`, {
      ...init,
      headers: {
        Authorization: `Bearer ${this.auth.token}`,
        ...(init.body ? { 'Content-Type': 'application/json' } : {}),
        ...init.headers,
      },
    });
  }

  async stop(): Promise<void> {
    await this.agent?.stop();
    await this.browser?.close();
    await this.server?.stop();
    if (this.keys) rmSync(this.keys, { recursive: true, force: true });
  }
}
