import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { owner, signIn } from './support/browser';
import type { ConsoleServer } from './support/console-server';
import { type SignedInConsole, signedInConsole } from './support/signed-in';

/**
 * Signing out in the console ends the sign-in on the server (`DELETE /api/auth/user`): the token the browser held,
 * and any copy of it, is refused afterwards, where before it stayed valid for its 72 hours.
 */
describe('web console: signing out ends the sign-in on the server', function () {
  this.timeout(90_000);
  let signedIn: SignedInConsole | undefined;
  let server: ConsoleServer;
  let page: Page;

  const storedToken = async () =>
    (
      JSON.parse((await page.evaluate('localStorage.getItem("gatehouse.auth")')) as string) as {
        token: string;
      }
    ).token;
  const me = (token: string) =>
    fetch(`${server.url}/api/auth/user`, { headers: { Authorization: `Bearer ${token}` } });

  before(async () => {
    signedIn = await signedInConsole();
    ({ server, page } = signedIn);
  });
  after(async () => {
    await signedIn?.close();
  });

  it('the Sign out menu item revokes the token, and signing in again works', async () => {
    const token = await storedToken();
    expect((await me(token)).status).to.equal(200);
    await page.getByRole('button', { name: /Account menu for/ }).click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await page.evaluate('localStorage.getItem("gatehouse.auth")')).to.equal(null);
    expect((await me(token)).status, 'the copied token is refused').to.equal(401);

    await signIn(page, server.url, owner.username, owner.password);
    await page.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
    const next = await storedToken();
    expect(next).to.not.equal(token);
    expect((await me(next)).status).to.equal(200);
  });
});
