import { expect } from 'chai';
import type { BrowserContext } from 'playwright-core';
import { eventually } from '../../support/agent-process';
import { clientOptions, passwordOptions } from '../../support/openssh';
import { Terminal } from '../../support/terminal';
import { expectAccessible, noWiderThanScreen, owner, signIn } from './support/browser';
import { type ConsoleServer, canShare, startConsoleServer } from './support/console-server';
import { DEVICE_PASSWORD, DeviceWorld } from './support/device-world';
import { addTeam, team } from './support/signed-in';

// Watching a live session as an administrator of a fleet does: the session runs through one instance's gateway,
// driven by the real OpenSSH client in a real terminal; the watcher's console is served by another instance of the
// same installation, and follows the terminal from the session page.

interface ApiSession {
  uid: string;
  active: boolean;
  authenticated: boolean;
  recorded: boolean;
}

describe(`web console: watching a live session from another instance${canShare ? '' : ' (pending without TEST_DATABASE_URL and TEST_REDIS_URL: the two instances share them)'}`, function () {
  this.timeout(180_000);
  let world: DeviceWorld;
  let second: ConsoleServer;
  const contexts: BrowserContext[] = [];
  let target: string;

  before(async function () {
    if (!canShare) this.skip();
    world = await DeviceWorld.start({ hostname: 'edge-watch', server: { shared: true } });
    second = await startConsoleServer({ sharing: world.server });
    target = `root@${world.auth.user}.edge-watch`;
    const recording = await world.api(`/api/users/security/${world.auth.tenant}`, {
      method: 'PUT',
      body: JSON.stringify({ session_record: true }),
    });
    expect(recording.status).to.equal(200);
    await addTeam(world);
  });
  after(async () => {
    for (const context of contexts) await context.close();
    await second?.stop();
    await world?.stop();
  });

  /** An interactive session through the first instance's gateway, signed in with the device password. */
  async function openShell(): Promise<Terminal> {
    const term = new Terminal(
      [
        ...clientOptions({ quiet: true }),
        ...passwordOptions(),
        '-tt',
        '-p',
        String(world.server.sshPort),
        `${target}@127.0.0.1`,
      ],
      { cols: 80, rows: 24 },
    );
    await term.waitFor(/password: ?$/i);
    term.type(`${DEVICE_PASSWORD}\r`);
    await term.waitFor(/[#$] $/);
    return term;
  }

  async function liveSession(): Promise<string> {
    return eventually(
      async () => {
        const sessions = (await (
          await world.api('/api/sessions?active=true&per_page=100')
        ).json()) as ApiSession[];
        return sessions.find((s) => s.authenticated && s.recorded)?.uid;
      },
      'the live recorded session',
      20_000,
    );
  }

  for (const [width, who] of [
    [1280, 'owner'],
    [390, 'observer'],
  ] as const) {
    it(`follows the terminal as it happens and names the watchers (${who}, ${width} px)`, async () => {
      const term = await openShell();
      let gone = false;
      void term.exited.then(() => {
        gone = true;
      });
      try {
        term.type(`echo before-$((${width} + 1))\r`);
        await term.waitFor(new RegExp(`before-${width + 1}`));
        const uid = await liveSession();

        // The watcher's own browser, signed in on the second instance.
        const context = await world.browser.newContext({ viewport: { width, height: 900 } });
        contexts.push(context);
        const page = await context.newPage();
        const account = who === 'owner' ? owner : team.observer;
        await signIn(page, second.url, account.username, account.password);
        await page.getByRole('heading', { name: /^Welcome, / }).waitFor();
        await page.goto(`${second.url}/sessions/${uid}`);
        const card = page.locator('.card', { has: page.getByRole('heading', { name: 'Live terminal' }) });
        await card.getByText('The person in the session sees a line saying that you are watching').waitFor();
        await card.getByRole('button', { name: 'Watch live' }).click();

        const screen = card.getByTestId('live-terminal');
        // The recording so far, from the store.
        await screen.getByText(`before-${width + 1}`).waitFor();
        await card.getByTestId('watchers').getByText(account.username).waitFor();
        // The person at the client is told, in their terminal.
        await term.waitFor(new RegExp(`gatehouse: ${account.username} is watching this session`));
        // What the person types and the device prints reaches the watcher's screen.
        const typedAt = Date.now();
        term.type(`echo live-$((${width} * 2))\r`);
        await screen.getByText(`live-${width * 2}`).waitFor();
        const followedMs = Date.now() - typedAt;
        expect(followedMs, 'typing to the watcher seeing the output').to.be.below(10_000);
        await noWiderThanScreen(page, `live terminal at ${width} px`);
        await expectAccessible(page, `live terminal at ${width} px`, { anyImpact: true });

        const beforeStop = term.output.length;
        await card.getByRole('button', { name: 'Stop watching' }).click();
        await term.waitFor(
          new RegExp(`gatehouse: ${account.username} stopped watching this session`),
          beforeStop,
        );
        await card.getByRole('button', { name: 'Watch live' }).waitFor();

        // Watching again, until the session ends: the last screen stays and the page says it ended.
        await card.getByRole('button', { name: 'Watch live' }).click();
        await screen.getByText(`live-${width * 2}`).waitFor();
        await term.waitFor(new RegExp(`gatehouse: ${account.username} is watching this session`), beforeStop);
        term.type('exit\r');
        expect(await term.exited).to.equal(0);
        await card.getByText('The session ended').waitFor({ timeout: 20_000 });
        await card
          .getByTestId('live-terminal')
          .getByText(`live-${width * 2}`)
          .waitFor();
        // The Recording card reads the recording again now that it is complete: it lasts as long as the session.
        const recordingCard = page.locator('.card', {
          has: page.getByRole('heading', { name: 'Recording' }),
        });
        await recordingCard.getByText(/^0:0[1-9] recorded$|^0:[1-5][0-9] recorded$/).waitFor();
      } finally {
        if (!gone) term.type('exit\r');
        await Promise.race([term.exited, new Promise((r) => setTimeout(r, 5_000))]);
      }
    });
  }
  it('shares the live terminal by a link: made on the session page, watched without an account, revoked', async () => {
    const term = await openShell();
    let gone = false;
    void term.exited.then(() => {
      gone = true;
    });
    try {
      term.type('echo linked-$((7 * 6))\r');
      await term.waitFor(/linked-42/);
      const uid = await liveSession();
      const context = await world.browser.newContext({ viewport: { width: 1280, height: 900 } });
      contexts.push(context);
      const page = await context.newPage();
      await signIn(page, second.url, owner.username, owner.password);
      await page.getByRole('heading', { name: /^Welcome, / }).waitFor();

      // Off until the namespace allows it: the card says where to turn it on.
      await page.goto(`${second.url}/sessions/${uid}`);
      const card = page.locator('.card', { has: page.getByRole('heading', { name: 'Share links' }) });
      await card.getByText('Share links are off in this namespace').waitFor();
      await card.getByRole('link', { name: 'Settings → Namespace' }).click();
      await page.getByRole('switch', { name: 'Allow share links to live sessions' }).click();
      await page.getByText('Share links are allowed').waitFor();

      await page.goto(`${second.url}/sessions/${uid}`);
      await card.getByLabel('Link works for').selectOption({ label: '15 minutes' });
      await card.getByRole('button', { name: 'Make a link' }).click();
      const link = await card.getByRole('textbox', { name: 'Share link' }).inputValue();
      expect(link).to.match(/\/share\/[A-Za-z0-9_-]{43}$/);
      await card.getByText('opened 0 times').waitFor();
      await expectAccessible(page, 'share links card', { anyImpact: true });

      // Someone without an account, on a phone, opens it (on the address of the instance they were sent).
      const stranger = await world.browser.newContext({ viewport: { width: 390, height: 800 } });
      contexts.push(stranger);
      const viewer = await stranger.newPage();
      await viewer.goto(`${second.url}${new URL(link).pathname}`);
      await viewer.getByRole('heading', { name: 'Shared terminal', level: 1 }).waitFor();
      await viewer.getByText('edge-watch').first().waitFor();
      const screen = viewer.getByTestId('live-terminal');
      await screen.getByText('linked-42').waitFor();
      await term.waitFor(/gatehouse: someone with a share link is watching this session/);
      const at = term.output.length;
      term.type('echo seen-by-link-$((5 + 5))\r');
      await term.waitFor(/seen-by-link-10/, at);
      await screen.getByText('seen-by-link-10').waitFor();
      await noWiderThanScreen(viewer, 'shared terminal at 390 px');
      await expectAccessible(viewer, 'shared terminal at 390 px', { anyImpact: true });

      // Revoked from the session page: the viewer's screen says so at once, and the link opens nothing more.
      await page.reload();
      await card.getByText('opened 1 time').waitFor();
      await card.getByRole('button', { name: 'Revoke' }).click();
      await page.getByText('Link revoked: it no longer works').waitFor();
      await viewer.getByText('The share link was revoked.').waitFor({ timeout: 10_000 });
      await viewer.reload();
      await viewer.getByText('This link opens nothing').waitFor();
    } finally {
      if (!gone) term.type('exit\r');
      await Promise.race([term.exited, new Promise((r) => setTimeout(r, 5_000))]);
    }
  });
});
