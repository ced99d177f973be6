import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { eventually } from '../../support/agent-process';
import { expectAccessible, noWiderThanScreen } from './support/browser';
import { DEVICE_PASSWORD, DeviceWorld } from './support/device-world';
import { sshThroughGateway } from './support/ssh';

// A real device: its page says which sign-ins the gateway takes (the namespace keys that reach it, a password) and
// links to adding a key; a device or session that is not there has a page of its own with an h1 and no retry; a
// recording shows its first frame before Play. At 1280 and 390 px, axe clean at any impact.

const widths = [
  { width: 1280, height: 900 },
  { width: 390, height: 844 },
];
const HOST = 'edge-signin';
const keyLine = (blob: string) => Buffer.from(`ssh-ed25519 ${blob} ada@laptop`).toString('base64');

describe('web console: the device page says which sign-in works; not-found pages; the first frame', function () {
  this.timeout(300_000);
  let world: DeviceWorld;
  let page: Page;
  let session = '';

  before(async () => {
    world = await DeviceWorld.start({ hostname: HOST });
    page = world.page;
    await sshThroughGateway({
      port: world.server.sshPort,
      target: `root@${world.auth.user}.${HOST}`,
      password: DEVICE_PASSWORD,
      tty: true,
      input: 'echo first-$((2 * 3)); sleep 1; echo later-$((4 * 4)); exit\r',
    });
    const sessions = await eventually(
      async () => {
        const list = (await (await world.api('/api/sessions')).json()) as {
          uid: string;
          active: boolean;
          recorded: boolean;
        }[];
        return list.some((s) => s.recorded) && list.every((s) => !s.active) ? list : undefined;
      },
      'the recorded session to close',
      30_000,
    );
    session = sessions.find((s) => s.recorded)?.uid ?? '';
  });
  after(async () => {
    await world?.stop();
  });

  const signingIn = () => page.getByRole('region', { name: 'Signing in' });

  it('says no registered key reaches the device, a password works, and links to adding a key', async () => {
    for (const viewport of widths) {
      await page.setViewportSize(viewport);
      await page.goto(`${world.server.url}/device/${world.uid}`);
      await signingIn().getByText('No public key registered in this namespace reaches').waitFor();
      expect(await signingIn().textContent()).to.contain('A password works too');
      await noWiderThanScreen(page, `device page without keys at ${viewport.width} px`);
      await expectAccessible(page, `device page without keys at ${viewport.width} px`, { anyImpact: true });
    }
    await signingIn().getByRole('link', { name: 'Add your public key' }).click();
    await page.getByRole('heading', { name: 'Public keys', level: 1 }).waitFor();
    // The empty list's title is the level below the page's h1 (axe heading-order).
    await page.getByRole('heading', { level: 2 }).first().waitFor();
    expect(await page.locator('.empty h3').count()).to.equal(0);
    await expectAccessible(page, 'public keys, none yet', { anyImpact: true });
  });

  it('lists the keys whose filter reaches the device, and only those', async () => {
    const post = async (body: unknown) => {
      const res = await world.api('/api/sshkeys/public-keys', { method: 'POST', body: JSON.stringify(body) });
      expect(res.status, await res.clone().text()).to.equal(200);
    };
    await post({
      name: 'laptop-of-ada',
      data: keyLine('AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl'),
      username: '^root$',
      filter: { hostname: '^edge-sign' },
    });
    await post({
      name: 'only-for-databases',
      data: keyLine('AAAAC3NzaC1lZDI1NTE5AAAAIIPmNaQhBjLyRzR+I+hb45Y5xaq18d+ZF0o6PikD+K3i'),
      username: '.*',
      filter: { tags: ['databases'] },
    });
    for (const viewport of widths) {
      await page.setViewportSize(viewport);
      await page.goto(`${world.server.url}/device/${world.uid}`);
      const item = signingIn().getByRole('listitem');
      await item.first().waitFor();
      expect(await item.count()).to.equal(1);
      expect(await item.textContent()).to.match(/^laptop-of-ada as users matching \^root\$/);
      await item.getByText(/^SHA256:/).waitFor();
      expect(await signingIn().textContent()).to.contain(`This public key reaches ${HOST}`);
      await noWiderThanScreen(page, `device page with a key at ${viewport.width} px`);
      await expectAccessible(page, `device page with a key at ${viewport.width} px`, { anyImpact: true });
    }
  });

  it('has a not-found page for a device and a session that are not there, with an h1 and no retry', async () => {
    for (const viewport of widths) {
      await page.setViewportSize(viewport);
      for (const [path, title] of [
        [`/device/${'0'.repeat(64)}`, 'Device not found'],
        ['/device/not-a-device', 'Device not found'],
        [`/sessions/${'0'.repeat(64)}`, 'Session not found'],
      ] as const) {
        await page.goto(`${world.server.url}${path}`);
        await page.getByRole('heading', { name: title, level: 1 }).waitFor();
        expect(await page.getByRole('button', { name: 'Try again' }).count(), path).to.equal(0);
        expect(
          await page
            .getByRole('main')
            .getByRole('link', { name: /^All (devices|sessions)$/ })
            .count(),
        ).to.equal(1);
        await expectAccessible(page, `${path} at ${viewport.width} px`, { anyImpact: true });
      }
    }
  });

  it('shows the recording’s first frame before Play', async () => {
    for (const viewport of widths) {
      await page.setViewportSize(viewport);
      await page.goto(`${world.server.url}/sessions/${session}`);
      await page.getByRole('button', { name: 'Play recording' }).waitFor();
      const screen = page.getByTestId('playback').locator('.xterm-rows');
      await eventually(
        async () => (((await screen.textContent()) ?? '').trim() !== '' ? true : undefined),
        'the first frame on the screen',
      );
      expect(await screen.textContent()).to.not.contain('later-16');
      const status = page.getByRole('status').filter({ hasText: /recorded$/ });
      expect(await status.count(), 'still before Play').to.equal(1);
      await page.getByRole('button', { name: 'Play recording' }).click();
      await page.getByText('Finished').waitFor({ timeout: 30_000 });
      expect(await screen.textContent()).to.contain('later-16');
      await expectAccessible(page, `session playback at ${viewport.width} px`, { anyImpact: true });
    }
  });
});
