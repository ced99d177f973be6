import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { eventually } from '../../support/agent-process';
import { completeSetup, expectAccessible, launchBrowser } from './support/browser';
import { startConsoleServer } from './support/console-server';
import { DEVICE_PASSWORD, DeviceWorld } from './support/device-world';
import { sshThroughGateway } from './support/ssh';

// Every screen of the console, with data in it, at a desktop width (1280 px) and a phone width (390 px): the page
// is never wider than the screen (a table either fits or scrolls inside its own frame), its actions can be
// reached, and axe finds no serious or critical violation in either theme. The list of screens is read from the
// community web module's own page and settings-tab tables, so a new screen without a visit here fails this test.

const moduleSource = (edition: string) =>
  readFileSync(fileURLToPath(new URL(`../../../plugins/${edition}/web/index.ts`, import.meta.url)), 'utf8');
const pathsOf = (source: string) => [...source.matchAll(/path: '([^']+)'/g)].map((m) => m[1] as string);
const webModule = moduleSource('community');
const pagePaths = pathsOf(webModule);
const settingsTabs = [...webModule.matchAll(/id: '([^']+)',\s*label:/g)].map((m) => m[1] as string);

/** Elements that stick out of the screen sideways without a scrolling frame of their own that fits. */
async function overflowing(page: Page): Promise<string[]> {
  return (await page.evaluate(`(() => {
    const width = document.documentElement.clientWidth;
    const found = [];
    if (document.documentElement.scrollWidth > width + 1)
      found.push('the page is ' + document.documentElement.scrollWidth + ' px wide');
    const menuClosed = document.querySelector('.app')?.getAttribute('data-menu') !== 'open';
    const name = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
      (typeof el.className === 'string' && el.className ? '.' + el.className.trim().split(/\\s+/).join('.') : '') +
      ' "' + (el.textContent || '').trim().slice(0, 40) + '"';
    for (const el of document.querySelectorAll('body *')) {
      if (menuClosed && el.closest('aside.sidebar')) continue;
      // The parts of an icon are where their svg is; the svg itself is checked.
      if (el.ownerSVGElement) continue;
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0 || getComputedStyle(el).visibility === 'hidden') continue;
      if (r.right <= width + 1 && r.left >= -1) continue;
      // Wholly off to the left is hidden on purpose (the skip link until focused) and widens nothing.
      if (r.right <= 0) continue;
      let frame = el.parentElement;
      let framed = false;
      while (frame && frame !== document.body) {
        const overflow = getComputedStyle(frame).overflowX;
        if (overflow !== 'visible') {
          const fr = frame.getBoundingClientRect();
          if (fr.right <= width + 1 && fr.left >= -1) framed = true;
          break;
        }
        frame = frame.parentElement;
      }
      if (!framed) found.push(name(el) + ' reaches ' + Math.round(r.left) + '..' + Math.round(r.right));
      if (found.length >= 8) break;
    }
    return found;
  })()`)) as string[];
}

describe('web console: every screen at 1280 and 390 px, never wider than the screen, axe clean', function () {
  this.timeout(600_000);
  let world: DeviceWorld;
  let page: Page;
  const visits: Record<string, string> = {};

  before(async () => {
    world = await DeviceWorld.start({ hostname: 'edge-screens' });
    page = world.page;
    const { uid } = world;
    const target = `root@${world.auth.user}.edge-screens`;
    // Data on every list: a recorded session, a refused one, a key, a rule, tags, an API key and an install key.
    await sshThroughGateway({
      port: world.server.sshPort,
      target,
      password: DEVICE_PASSWORD,
      tty: true,
      input: 'echo screens-$((4 * 4)) a_long_line_that_is_wider_than_a_phone_screen_________________\rexit\r',
    });
    await sshThroughGateway({ port: world.server.sshPort, target, password: 'wrong', command: 'true' });
    const post = async (p: string, body: unknown, method = 'POST') => {
      const res = await world.api(p, { method, body: JSON.stringify(body) });
      expect(res.status, `${method} ${p}: ${await res.clone().text()}`).to.be.oneOf([200, 201]);
      return res.json();
    };
    await post(`/api/devices/${uid}/tags`, { tags: ['production', 'edge-routers'] }, 'PUT');
    await post('/api/sshkeys/public-keys', {
      name: 'a-key-with-a-rather-long-name-for-a-phone',
      data: Buffer.from(
        'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ada@laptop',
      ).toString('base64'),
      username: '.*',
      filter: { tags: ['production'] },
    });
    await post('/api/firewall/rules', {
      action: 'deny',
      active: true,
      priority: 10,
      source_ip: '^10\\.0\\.0\\.',
      username: 'root',
      filter: { tags: ['production'] },
    });
    await post('/api/namespaces/api-key', { name: 'deploy-pipeline', expires_in: -1, role: 'operator' });
    await post('/api/namespaces/install-keys', { name: 'rack-7-rollout', usage_limit: 50 });
    const sessions = await eventually(
      async () => {
        const list = (await (await world.api('/api/sessions')).json()) as { uid: string; active: boolean }[];
        return list.length >= 2 && list.every((s) => !s.active) ? list : undefined;
      },
      'the sessions to close',
      20_000,
    );
    const session = sessions[0]?.uid ?? '';
    const fill: Record<string, string> = {
      ':uid': uid,
      ':status': 'pending',
    };
    for (const p of pagePaths) {
      const url = p.startsWith('/sessions/')
        ? `/sessions/${session}`
        : p.replace(/:[a-z]+/g, (k) => fill[k] ?? k);
      visits[p] = url;
    }
    for (const tab of settingsTabs) visits[`/settings/${tab}`] = `/settings/${tab}`;
  });
  after(async () => {
    await world?.stop();
  });

  it('knows every screen of the community console', () => {
    expect(pagePaths).to.include.members([
      '/',
      '/devices',
      '/sessions/:uid',
      '/device/:uid/terminal',
      '/tags',
    ]);
    expect(settingsTabs).to.include.members([
      'profile',
      'security',
      'namespace',
      'members',
      'api-keys',
      'install-keys',
    ]);
  });

  for (const width of [1280, 390]) {
    it(`fits every screen at ${width} px and passes axe`, async () => {
      await page.setViewportSize({ width, height: width > 800 ? 900 : 844 });
      const problems: string[] = [];
      for (const [route, url] of Object.entries(visits)) {
        await page.goto(`${world.server.url}${url}`);
        await page
          .locator('main h1, main [role="alert"]')
          .first()
          .waitFor({ timeout: 15_000 })
          .catch((err: Error) => {
            throw new Error(`${route} (${url}) at ${width} px: ${err.message}`);
          });
        // Lists and details load after the heading: wait for the busy indicators to go.
        await page
          .locator('.loading')
          .first()
          .waitFor({ state: 'detached', timeout: 10_000 })
          .catch(() => undefined);
        await page.waitForTimeout(150);
        for (const o of await overflowing(page)) problems.push(`${route} at ${width} px: ${o}`);
        await expectAccessible(page, `${route} (${url}) at ${width} px`);
      }
      expect(problems, problems.join('\n')).to.deep.equal([]);
    });
  }

  it('reaches every sidebar item from the menu at 390 px', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${world.server.url}/`);
    const menu = page.getByRole('button', { name: 'Open menu' });
    await menu.click();
    // The drawer slides in.
    await page.waitForTimeout(400);
    const links = page.getByRole('navigation', { name: 'Primary' }).getByRole('link');
    const count = await links.count();
    expect(count).to.be.at.least(6);
    for (let i = 0; i < count; i++) {
      const box = await links.nth(i).boundingBox();
      expect(box && box.x >= 0 && box.x + box.width <= 390, `sidebar link ${i} on screen`).to.equal(true);
    }
    expect(await overflowing(page)).to.deep.equal([]);
    await expectAccessible(page, 'menu open at 390 px');
    await links.filter({ hasText: 'Sessions' }).click();
    await page.getByRole('heading', { name: 'Sessions' }).waitFor();
  });

  it('fits the sign-in screen at 390 px', async () => {
    const context = await world.browser.newContext({ viewport: { width: 390, height: 844 } });
    try {
      const anonymous = await context.newPage();
      await anonymous.goto(`${world.server.url}/login`);
      await anonymous.getByRole('button', { name: 'Sign in' }).waitFor();
      expect(await overflowing(anonymous)).to.deep.equal([]);
      await expectAccessible(anonymous, 'sign-in at 390 px');
    } finally {
      await context.close();
    }
  });
});

// The screens the other editions add, in their own servers (their modules load only where the edition runs).
for (const edition of ['enterprise', 'cloud']) {
  describe(`web console, ${edition} edition: its own screens at 1280 and 390 px`, function () {
    this.timeout(180_000);
    it(`fits ${pathsOf(moduleSource(edition)).join(', ')} and passes axe`, async () => {
      const [server, browser] = await Promise.all([startConsoleServer({ edition }), launchBrowser()]);
      try {
        const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
        await completeSetup(page, server.setupUrl);
        await page.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
        const problems: string[] = [];
        for (const width of [1280, 390]) {
          await page.setViewportSize({ width, height: width > 800 ? 900 : 844 });
          for (const path of pathsOf(moduleSource(edition))) {
            await page.goto(`${server.url}${path}`);
            await page.locator('main h1, main [role="alert"]').first().waitFor({ timeout: 15_000 });
            await page
              .locator('.loading')
              .first()
              .waitFor({ state: 'detached', timeout: 10_000 })
              .catch(() => undefined);
            for (const o of await overflowing(page)) problems.push(`${path} at ${width} px: ${o}`);
            await expectAccessible(page, `${edition} ${path} at ${width} px`);
          }
        }
        expect(problems, problems.join('\n')).to.deep.equal([]);
      } finally {
        await browser.close();
        await server.stop();
      }
    });
  });
}
