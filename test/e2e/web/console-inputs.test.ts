import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startSmtp, type TestSmtp } from '../../support/smtp';
import {
  completeSetup,
  expectAccessible,
  launchBrowser,
  noWiderThanScreen,
  owner,
  signIn,
} from './support/browser';
import { type ConsoleServer, startConsoleServer } from './support/console-server';

// The account fields say their rules once and refuse a value that breaks them instead of cutting it short; the
// commands wrap at their spaces; console text carries no raw Markdown. At 1280 and 390 px, axe clean at any impact.

const widths = [
  { width: 1280, height: 900 },
  { width: 390, height: 844 },
];

/** What a field shows under it as its error, found by the field's label. */
async function fieldError(page: Page, label: string): Promise<string> {
  const input = page.getByLabel(label, { exact: true });
  const id = await input.getAttribute('id');
  const error = page.locator(`[id="${id}-error"]`);
  await error.waitFor();
  return ((await error.textContent()) ?? '').trim();
}

/** Types as a paste does: the whole value in one input event. */
async function paste(page: Page, label: string, value: string): Promise<void> {
  await page.getByLabel(label, { exact: true }).fill(value);
}

describe('web console: inputs say their rules and refuse instead of cutting', function () {
  this.timeout(120_000);
  let server: ConsoleServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  before(async () => {
    [server, browser] = await Promise.all([startConsoleServer(), launchBrowser()]);
    context = await browser.newContext({ viewport: widths[0] });
    page = await context.newPage();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('setup keeps a pasted password that is too long, says why it is refused, and sends nothing', async () => {
    for (const viewport of widths) {
      await page.setViewportSize(viewport);
      await page.goto(server.setupUrl);
      await page.getByLabel('Full name').fill(owner.name);
      await page.getByLabel('Email').fill(owner.email);
      await page.getByLabel('Username').fill('ada lovelace');
      const long = 'a-password-that-is-longer-than-30';
      await paste(page, 'Password', long);
      await paste(page, 'Confirm password', long);
      // Kept whole: the person sees the field holds what they pasted, and why it cannot be used.
      expect(await page.getByLabel('Password', { exact: true }).inputValue()).to.equal(long);
      expect(await fieldError(page, 'Password')).to.equal(
        `Use at most 30 characters; this has ${long.length}.`,
      );
      expect(await fieldError(page, 'Username')).to.equal('Use only letters, digits and - _ . @.');
      const hint = page.getByText('5 to 30 characters.', { exact: true });
      expect(await hint.count()).to.equal(1);
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.getByLabel('Full name').waitFor();
      const info = (await (await fetch(`${server.url}/info`)).json()) as { setup: boolean };
      expect(info.setup, 'nothing was sent').to.equal(false);
      await noWiderThanScreen(page, `setup with refused fields at ${viewport.width} px`);
      await expectAccessible(page, `setup with refused fields at ${viewport.width} px`, { anyImpact: true });
    }
    // Too short is said once the form is sent, not while typing.
    await page.goto(server.setupUrl);
    await paste(page, 'Password', 'abc');
    expect(await page.locator('.field .error').count()).to.equal(0);
    await page.getByRole('button', { name: 'Create account' }).click();
    expect(await fieldError(page, 'Password')).to.equal('Use at least 5 characters; this has 3.');
    expect(await fieldError(page, 'Full name')).to.equal('Fill this in.');
    await completeSetup(page, server.setupUrl);
    await page.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
  });

  it('sign-in refuses a password longer than any Gatehouse password, without cutting it', async () => {
    await page.getByRole('button', { name: /Account menu/ }).click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    for (const viewport of widths) {
      await page.setViewportSize(viewport);
      await page.goto(server.url);
      await page.getByLabel('Username or email').fill(owner.username);
      const long = 'x'.repeat(65);
      await paste(page, 'Password', long);
      expect(await page.getByLabel('Password', { exact: true }).inputValue()).to.equal(long);
      expect(await fieldError(page, 'Password')).to.equal('Use at most 64 characters; this has 65.');
      await expectAccessible(page, `sign-in with a refused password at ${viewport.width} px`, {
        anyImpact: true,
      });
    }
    await signIn(page, server.url, owner.username, owner.password);
    await page.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
  });

  it('changing the password in Settings says the same rule and refuses a too-long one', async () => {
    for (const viewport of widths) {
      await page.setViewportSize(viewport);
      await page.goto(`${server.url}/settings/security`);
      await page.getByLabel('Current password').fill(owner.password);
      await paste(page, 'New password', 'y'.repeat(31));
      expect(await page.getByLabel('New password', { exact: true }).inputValue()).to.have.length(31);
      expect(await fieldError(page, 'New password')).to.equal('Use at most 30 characters; this has 31.');
      expect(await page.getByText('5 to 30 characters.', { exact: true }).count()).to.equal(1);
      await expectAccessible(page, `settings security, refused password at ${viewport.width} px`, {
        anyImpact: true,
      });
    }
  });

  it('wraps an install command at its spaces only, scrolling a word too long for the line', async () => {
    for (const viewport of widths) {
      await page.setViewportSize(viewport);
      await page.goto(server.url);
      const command = page.getByLabel('install command', { exact: true });
      await command.waitFor();
      // The page runs in the browser, which this Node-typed project does not describe: the checks go in as text.
      const element = `document.querySelector('textarea[aria-label="install command"]')`;
      const style = (await page.evaluate(
        `(() => { const s = getComputedStyle(${element}); return [s.wordBreak, s.overflowWrap, s.overflowX]; })()`,
      )) as string[];
      expect(style).to.deep.equal(['normal', 'normal', 'auto']);
      // Each line of the wrapped command is a run of whole words: a probe laid out as the field is, one span a word.
      const lines = (await page.evaluate(`(() => {
        const el = ${element};
        const probe = document.createElement('div');
        const s = getComputedStyle(el);
        for (const p of ['font', 'letterSpacing', 'whiteSpace', 'wordBreak', 'overflowWrap', 'paddingLeft',
          'paddingRight', 'boxSizing', 'tabSize'])
          probe.style[p] = s[p];
        probe.style.width = el.clientWidth + 'px';
        probe.style.position = 'absolute';
        probe.style.visibility = 'hidden';
        const words = el.value.split(' ');
        probe.innerHTML = words.map((w, i) => '<span>' + w.replace(/&/g, '&amp;').replace(/</g, '&lt;') +
          '</span>' + (i < words.length - 1 ? ' ' : '')).join('');
        document.body.appendChild(probe);
        const spans = [...probe.querySelectorAll('span')];
        const broken = spans.filter((span) => span.getClientRects().length > 1).map((span) => span.textContent);
        probe.remove();
        return broken;
      })()`)) as string[];
      // A line may still end after a hyphen inside a word (a line break opportunity of Unicode's), never elsewhere.
      expect(
        lines.filter((word) => !word.includes('-')),
        'words broken across lines',
      ).to.deep.equal([]);
      await noWiderThanScreen(page, `home with install commands at ${viewport.width} px`);
    }
  });

  it('shows commands in console text as code, not between raw backticks', async () => {
    for (const viewport of widths) {
      await page.setViewportSize(viewport);
      await page.goto(`${server.url}/instance/namespaces`);
      const command = page.locator('.page-head code', { hasText: 'gatehouse namespace set-max-devices' });
      await command.waitFor();
      expect(await page.locator('main').textContent()).to.not.contain('`');
      await expectAccessible(page, `instance namespaces at ${viewport.width} px`, { anyImpact: true });
    }
  });
});

describe('web console (cloud): sign-up and the reset link say their rules and refuse instead of cutting', function () {
  this.timeout(120_000);
  let smtp: TestSmtp;
  let server: ConsoleServer;
  let browser: Browser;
  let page: Page;

  before(async () => {
    smtp = await startSmtp();
    [server, browser] = await Promise.all([
      startConsoleServer({ edition: 'cloud', env: { GATEHOUSE_SMTP_URL: smtp.url } }),
      launchBrowser(),
    ]);
    page = await (await browser.newContext({ viewport: widths[0] })).newPage();
    await completeSetup(page, server.setupUrl);
    await page.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
    await page.getByRole('button', { name: /Account menu/ }).click();
    await page.getByRole('button', { name: 'Sign out' }).click();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await smtp?.stop();
  });

  it('sign-up keeps a too-long or ill-formed password, says the rule of sign-up, and sends nothing', async () => {
    for (const viewport of widths) {
      await page.setViewportSize(viewport);
      await page.goto(`${server.url}/signup`);
      await page.getByLabel('Name', { exact: true }).fill('Bea Builder');
      await page.getByLabel('E-mail', { exact: true }).fill('bea@example.com');
      await page.getByLabel('Username', { exact: true }).fill('bea');
      const long = 'p'.repeat(65);
      await paste(page, 'Password', long);
      expect(await page.getByLabel('Password', { exact: true }).inputValue()).to.equal(long);
      expect(await fieldError(page, 'Password')).to.equal('Use at most 64 characters; this has 65.');
      expect(
        await page.getByText('5 to 64 characters: letters, digits, _ and -.', { exact: true }).count(),
      ).to.equal(1);
      await paste(page, 'Password', 'pass word');
      expect(await fieldError(page, 'Password')).to.equal('Use only letters, digits, _ and -.');
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.getByLabel('Password', { exact: true }).waitFor();
      expect(await page.getByRole('heading', { name: 'Check your inbox' }).count()).to.equal(0);
      await noWiderThanScreen(page, `sign-up with a refused password at ${viewport.width} px`);
      await expectAccessible(page, `sign-up with a refused password at ${viewport.width} px`, {
        anyImpact: true,
      });
    }
  });

  it('the reset link says the same rule as setup and refuses a too-long password', async () => {
    for (const viewport of widths) {
      await page.setViewportSize(viewport);
      await page.goto(`${server.url}/reset-password?uid=${'a'.repeat(24)}&token=${'b'.repeat(43)}`);
      await paste(page, 'New password', 'r'.repeat(31));
      expect(await page.getByLabel('New password', { exact: true }).inputValue()).to.have.length(31);
      expect(await fieldError(page, 'New password')).to.equal('Use at most 30 characters; this has 31.');
      expect(await page.getByText('5 to 30 characters.', { exact: true }).count()).to.equal(1);
      await expectAccessible(page, `reset password, refused at ${viewport.width} px`, { anyImpact: true });
    }
  });
});
