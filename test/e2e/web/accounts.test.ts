import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { completeSetup, expectAccessible, launchBrowser, owner, signIn } from './support/browser';
import { type ConsoleServer, startConsoleServer } from './support/console-server';
import { authenticatorCode } from './support/totp';

// A namespace owner's paths through the console, against the real server: API keys, public keys, members
// and roles, two-step verification, and the lockout message.

describe('web console: the owner manages keys, members and their own account', function () {
  this.timeout(90_000);
  let server: ConsoleServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let keyDir: string;

  const token = async () =>
    JSON.parse((await page.evaluate('localStorage.getItem("gatehouse.auth")')) as string) as {
      token: string;
      tenant: string;
    };

  before(async () => {
    [server, browser] = await Promise.all([
      startConsoleServer({ env: { GATEHOUSE_LOCKOUT_THRESHOLD: '3' } }),
      launchBrowser(),
    ]);
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    await completeSetup(page, server.setupUrl);
    await page.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
    keyDir = mkdtempSync(path.join(tmpdir(), 'gatehouse-web-key-'));
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    if (keyDir) rmSync(keyDir, { recursive: true, force: true });
  });

  it('creates an API key, shows it once, and the key works against the API', async () => {
    await page.goto(`${server.url}/settings/api-keys`);
    await page.getByRole('heading', { name: 'API keys', exact: true }).waitFor();
    await page.getByText('No API keys').waitFor();
    await expectAccessible(page, 'API keys (empty)');
    await page.getByRole('button', { name: 'Create API key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create an API key' });
    await dialog.getByLabel('Name').fill('ci-deploy');
    await dialog.getByLabel('Expires after').selectOption('90');
    await dialog.getByLabel('Role').selectOption('operator');
    await expectAccessible(page, 'create API key dialog');
    await dialog.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByRole('dialog', { name: 'API key created' });
    const key = await shown.getByLabel('API key', { exact: true }).inputValue();
    expect(key).to.match(/^[0-9a-f-]{36}$/);
    await shown.getByRole('button', { name: 'Close' }).click();
    await page.getByRole('table', { name: 'API keys' }).getByText('ci-deploy').waitFor();
    // The key reaches what its operator role allows, in the namespace it was made for.
    const withKey = await fetch(`${server.url}/api/devices`, { headers: { 'X-API-Key': key } });
    expect(withKey.status).to.equal(200);
    const { token: bearer } = await token();
    const listed = (await (
      await fetch(`${server.url}/api/namespaces/api-key`, { headers: { Authorization: `Bearer ${bearer}` } })
    ).json()) as { name: string; role: string }[];
    expect(listed.map((k) => [k.name, k.role])).to.deep.equal([['ci-deploy', 'operator']]);
  });

  it('adds a public key pasted from a .pub file and lists it under its fingerprint', async () => {
    const file = path.join(keyDir, 'id_ed25519');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'ada@laptop', '-f', file]);
    const line = readFileSync(`${file}.pub`, 'utf8').trim();
    const fingerprint = execFileSync('ssh-keygen', ['-l', '-E', 'md5', '-f', `${file}.pub`], {
      encoding: 'utf8',
    })
      .split(' ')[1]
      ?.replace(/^MD5:/, '');
    await page.goto(`${server.url}/public-keys`);
    await page.getByText('No public keys').waitFor();
    await page.getByRole('button', { name: 'Add public key' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'Add a public key' });
    await dialog.getByLabel('Name').fill('ada-laptop');
    await dialog.getByLabel('Public key').fill(line);
    await expectAccessible(page, 'add public key dialog');
    await dialog.getByRole('button', { name: 'Add key' }).click();
    const table = page.getByRole('table', { name: 'Public keys' });
    await table.getByText('ada-laptop').waitFor();
    // Both fingerprints, as ssh-keygen prints them: SHA256 (its default) and MD5 (the API's key name).
    const sha256 = execFileSync('ssh-keygen', ['-l', '-f', `${file}.pub`], { encoding: 'utf8' }).split(
      ' ',
    )[1];
    expect(await table.locator('code').allTextContents()).to.deep.equal([sha256, `MD5:${fingerprint}`]);
    await expectAccessible(page, 'public keys');
  });

  it('explains a bad public key before sending it', async () => {
    await page.getByRole('button', { name: 'Add public key' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'Add a public key' });
    await dialog.getByLabel('Name').fill('broken');
    await dialog.getByLabel('Public key').fill('not a key');
    await dialog.getByRole('button', { name: 'Add key' }).click();
    await dialog.getByText('Paste a public key line').waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
  });

  it('says that an unknown e-mail address needs an account, and how an administrator makes one', async () => {
    await page.goto(`${server.url}/settings/members`);
    await page.getByRole('table', { name: 'Members' }).waitFor();
    await page.getByRole('button', { name: 'Add member' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a member' });
    await dialog.getByLabel('Email').fill('nobody-yet@example.com');
    await dialog.getByRole('button', { name: 'Add member' }).click();
    const said = dialog.getByText('No Gatehouse account uses nobody-yet@example.com.', { exact: false });
    await said.waitFor();
    const text = (await said.textContent()) ?? '';
    expect(text).to.contain('needs an account first');
    expect(text).to.contain('npx gatehouse user create --username <username> --email nobody-yet@example.com');
    expect(text).to.not.contain('no longer exists');
    await expectAccessible(page, 'add member, unknown address');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
  });

  (process.env.TEST_DATABASE_URL ? it : it.skip)(
    'adds a member by e-mail and changes their role (the second account is made with the admin CLI, which needs PostgreSQL)',
    async () => {
      server.cli(
        'user',
        'create',
        '--username',
        'grace',
        '--email',
        'grace@example.com',
        '--password',
        'grace-pass',
      );
      await page.goto(`${server.url}/settings/members`);
      await page.getByRole('table', { name: 'Members' }).waitFor();
      await page.getByRole('button', { name: 'Add member' }).click();
      const dialog = page.getByRole('dialog', { name: 'Add a member' });
      await dialog.getByLabel('Email').fill('grace@example.com');
      await dialog.getByLabel('Role').selectOption('observer');
      await dialog.getByRole('button', { name: 'Add member' }).click();
      const role = page.getByLabel('Role of grace@example.com');
      await role.waitFor();
      expect(await role.inputValue()).to.equal('observer');
      await expectAccessible(page, 'members');
      await role.selectOption('operator');
      await page.getByText('Role changed to Operator').waitFor();
      const { token: bearer, tenant } = await token();
      const answer = await fetch(`${server.url}/api/namespaces/${tenant}`, {
        headers: { Authorization: `Bearer ${bearer}` },
      });
      const namespace = (await answer.json()) as { members: { email: string; role: string }[] };
      expect(namespace.members.find((m) => m.email === 'grace@example.com')?.role).to.equal('operator');
    },
  );

  it('turns on two-step verification with the QR secret, then signs in with an authenticator code', async () => {
    await page.goto(`${server.url}/settings/security`);
    await page.getByText('Add a recovery email first').waitFor();
    await page.goto(`${server.url}/settings/profile`);
    await page.getByLabel('Recovery email').fill('ada.recovery@example.com');
    await page.getByRole('button', { name: 'Save profile' }).click();
    await page.getByText('Profile saved').waitFor();
    await page.goto(`${server.url}/settings/security`);
    await page.getByRole('button', { name: 'Set up two-step verification' }).click();
    await page.getByRole('img', { name: 'QR code for your authenticator app' }).waitFor();
    await expectAccessible(page, 'two-step setup');
    const secret = await page.getByLabel('secret key', { exact: true }).inputValue();
    expect(secret).to.match(/^[A-Z2-7]{16,}$/);
    const turnOn = page.getByRole('button', { name: 'Turn on' });
    expect(await turnOn.isDisabled()).to.equal(true);
    await page.getByLabel('I have saved my recovery codes').check();
    await page.getByLabel('Verification code').fill(authenticatorCode(secret));
    await turnOn.click();
    await page.getByText('Two-step verification is on').first().waitFor();

    await page.getByRole('button', { name: /Account menu/ }).click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, server.url, owner.username, owner.password);
    await page.getByRole('heading', { name: 'Two-step verification' }).waitFor();
    await expectAccessible(page, 'two-step sign-in');
    await page
      .getByLabel('Verification code')
      .fill('000000' === authenticatorCode(secret) ? '111111' : '000000');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByText('That code is not valid').waitFor();
    // The next window's code: the one used to turn MFA on may not be accepted twice.
    await page.getByLabel('Verification code').fill(authenticatorCode(secret, Date.now() + 30_000));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
  });

  it('shows the lockout message with the time it ends after repeated wrong passwords', async () => {
    const fresh = await browser.newContext();
    const visitor = await fresh.newPage();
    try {
      // The server's threshold is 3 here: two answers say the password is wrong, the third locks.
      for (let attempt = 0; attempt < 2; attempt++) {
        await signIn(visitor, server.url, owner.username, `wrong-${attempt}`);
        await visitor
          .getByRole('alert')
          .filter({ hasText: 'The username or password is incorrect.' })
          .waitFor();
      }
      await signIn(visitor, server.url, owner.username, 'wrong-2');
      const locked = visitor.getByRole('status').filter({ hasText: 'Account temporarily locked' });
      await locked.waitFor();
      expect(await locked.textContent()).to.match(/locked until \d{1,2}:\d{2}.*\(about \d+ minutes?\)/);
      await expectAccessible(visitor, 'lockout message');
    } finally {
      await fresh.close();
    }
  });
});
