import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { expectAccessible, owner, signIn } from './support/browser';
import type { ConsoleServer } from './support/console-server';
import { type SignedInConsole, signedInConsole } from './support/signed-in';
import { authenticatorCode } from './support/totp';

// Two-step verification's way back in: the recovery codes shown when it is turned on sign a person in once
// each, and a code just used still turns two-step verification off for a while.

describe('web console: recovery codes and turning two-step verification off', function () {
  this.timeout(60_000);
  let signedIn: SignedInConsole | undefined;
  let server: ConsoleServer;
  let page: Page;
  let codes: string[] = [];

  const signOut = async () => {
    await page.getByRole('button', { name: /Account menu/ }).click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Gatehouse' }).waitFor();
  };
  const currentUser = async () => {
    const auth = JSON.parse((await page.evaluate('localStorage.getItem("gatehouse.auth")')) as string) as {
      token: string;
    };
    return (await (
      await fetch(`${server.url}/api/auth/user`, { headers: { Authorization: `Bearer ${auth.token}` } })
    ).json()) as { mfa: boolean };
  };
  const signInWithRecoveryCode = async (code: string) => {
    await signIn(page, server.url, owner.username, owner.password);
    await page.getByRole('heading', { name: 'Two-step verification' }).waitFor();
    await page.getByRole('button', { name: 'Use a recovery code' }).click();
    await page.getByLabel('Recovery code').fill(code);
    await page.getByRole('button', { name: 'Verify' }).click();
  };

  before(async () => {
    signedIn = await signedInConsole();
    ({ server, page } = signedIn);
  });
  after(async () => {
    await signedIn?.close();
  });

  it('shows the recovery codes while turning two-step verification on', async () => {
    await page.goto(`${server.url}/settings/profile`);
    await page.getByLabel('Recovery email').fill('ada.recovery@example.com');
    await page.getByRole('button', { name: 'Save profile' }).click();
    await page.getByText('Profile saved').waitFor();
    await expectAccessible(page, 'profile');
    await page.goto(`${server.url}/settings/security`);
    await expectAccessible(page, 'security (two-step off)');
    await page.getByRole('button', { name: 'Set up two-step verification' }).click();
    const shown = page.getByTestId('recovery-codes');
    await shown.waitFor();
    codes = (await shown.locator('span').allTextContents()).map((c) => c.trim());
    expect(codes.length).to.be.at.least(2);
    expect(new Set(codes).size).to.equal(codes.length);
    const secret = await page.getByLabel('secret key', { exact: true }).inputValue();
    await page.getByLabel('I have saved my recovery codes').check();
    await page.getByLabel('Verification code').fill(authenticatorCode(secret));
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByText('Two-step verification is on').first().waitFor();
    await expectAccessible(page, 'security (two-step on)');
    expect((await currentUser()).mfa).to.equal(true);
  });

  it('signs in with a recovery code, which then no longer signs in', async () => {
    await signOut();
    await signInWithRecoveryCode('not-a-recovery-code');
    await page.getByText('That recovery code is not valid or was already used.').waitFor();
    await expectAccessible(page, 'recovery code sign-in');
    await page.getByLabel('Recovery code').fill(codes[0] ?? '');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();

    await signOut();
    await signInWithRecoveryCode(codes[0] ?? '');
    await page.getByText('That recovery code is not valid or was already used.').waitFor();
    await page.getByLabel('Recovery code').fill(codes[1] ?? '');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
  });

  it('turns two-step verification off with the recovery code just used; the next sign-in asks for no code', async () => {
    await page.goto(`${server.url}/settings/security`);
    await page.getByRole('button', { name: 'Turn off' }).click();
    const dialog = page.getByRole('dialog', { name: 'Turn off two-step verification?' });
    await dialog.getByRole('button', { name: 'Use a recovery code' }).click();
    await dialog.getByLabel('Recovery code').fill('not-a-recovery-code');
    await dialog.getByRole('button', { name: 'Turn off' }).click();
    await dialog.getByText('That recovery code is not valid.').waitFor();
    await expectAccessible(page, 'turn off two-step dialog');
    await dialog.getByLabel('Recovery code').fill(codes[1] ?? '');
    await dialog.getByRole('button', { name: 'Turn off' }).click();
    await page.getByText('Two-step verification is off').waitFor();
    await page.getByRole('button', { name: 'Set up two-step verification' }).waitFor();
    expect((await currentUser()).mfa).to.equal(false);

    await signOut();
    await signIn(page, server.url, owner.username, owner.password);
    await page.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
  });
});
