import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { expectAccessible, owner, signIn } from './support/browser';
import type { ConsoleServer } from './support/console-server';
import { type SignedInConsole, signedInConsole } from './support/signed-in';

// Namespaces from the switcher at the top of every screen: create one, switch between them, delete one as its
// owner, and leave one as a member (leaving returns a token without that namespace).

interface Auth {
  token: string;
  tenant: string;
}
interface Namespace {
  name: string;
  tenant_id: string;
  members: { id: string; email?: string; role: string }[];
}

describe('web console: namespaces', function () {
  this.timeout(60_000);
  let signedIn: SignedInConsole | undefined;
  let server: ConsoleServer;
  let browser: Browser;
  let page: Page;

  const authOf = async (p: Page) =>
    JSON.parse((await p.evaluate('localStorage.getItem("gatehouse.auth")')) as string) as Auth;
  const call = async (auth: Auth, method: string, p: string, body?: unknown) =>
    fetch(`${server.url}${p}`, {
      method,
      headers: { Authorization: `Bearer ${auth.token}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const namespaces = async (auth: Auth) =>
    (await (await call(auth, 'GET', '/api/namespaces?per_page=100')).json()) as Namespace[];
  const switcher = (p: Page, name: string) =>
    p.getByRole('button', { name: `Namespace: ${name}. Change namespace` });

  before(async () => {
    signedIn = await signedInConsole();
    ({ server, browser, page } = signedIn);
  });
  after(async () => {
    await signedIn?.close();
  });

  it('creates a namespace from the switcher and lands in it', async () => {
    await switcher(page, owner.username).click();
    await expectAccessible(page, 'namespace menu');
    await page.getByRole('button', { name: 'Create namespace' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create a namespace' });
    await dialog.getByLabel('Name').fill('lab-team');
    await expectAccessible(page, 'create namespace dialog');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await page.getByText('Namespace lab-team created').waitFor();
    await switcher(page, 'lab-team').waitFor();
    const auth = await authOf(page);
    const lab = (await namespaces(auth)).find((n) => n.name === 'lab-team');
    expect(lab?.tenant_id).to.equal(auth.tenant);
  });

  it('says so in words when the name is taken', async () => {
    await switcher(page, 'lab-team').click();
    await page.getByRole('button', { name: 'Create namespace' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create a namespace' });
    await dialog.getByLabel('Name').fill('lab-team');
    await dialog.getByRole('button', { name: 'Create' }).click();
    const problem = dialog.getByRole('alert');
    await problem.waitFor();
    expect(await problem.textContent()).to.match(/name.*(taken|already|in use)/i);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
  });

  it('switches back to the first namespace; the settings follow', async () => {
    await switcher(page, 'lab-team').click();
    await page.getByRole('button', { name: owner.username, exact: true }).click();
    await switcher(page, owner.username).waitFor();
    const auth = await authOf(page);
    const first = (await namespaces(auth)).find((n) => n.name === owner.username);
    expect(auth.tenant).to.equal(first?.tenant_id);
    await page.goto(`${server.url}/settings/namespace`);
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).to.equal(owner.username);
  });

  it('deletes a namespace only once its name is typed, and moves to another one', async () => {
    await switcher(page, owner.username).click();
    await page.getByRole('button', { name: 'lab-team', exact: true }).click();
    await switcher(page, 'lab-team').waitFor();
    await page.goto(`${server.url}/settings/namespace`);
    await page.getByRole('button', { name: 'Delete namespace' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete lab-team?' });
    await dialog.getByLabel('Namespace name').fill('lab');
    await dialog.getByRole('button', { name: 'Delete forever' }).click();
    await dialog.getByText('Type lab-team to confirm.').waitFor();
    await expectAccessible(page, 'delete namespace dialog');
    await dialog.getByLabel('Namespace name').fill('lab-team');
    await dialog.getByRole('button', { name: 'Delete forever' }).click();
    await page.getByText('lab-team deleted').waitFor();
    await switcher(page, owner.username).waitFor();
    const names = (await namespaces(await authOf(page))).map((n) => n.name);
    expect(names).to.deep.equal([owner.username]);
  });

  (process.env.TEST_DATABASE_URL ? it : it.skip)(
    'lets a member leave a namespace (the member account is made with the admin CLI, which needs PostgreSQL)',
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
      const ada = await authOf(page);
      const created = await call(ada, 'POST', '/api/namespaces', { name: 'shared-lab' });
      expect(created.status).to.equal(200);
      const shared = (await created.json()) as Namespace;
      const added = await call(ada, 'POST', `/api/namespaces/${shared.tenant_id}/members`, {
        email: 'grace@example.com',
        role: 'operator',
      });
      expect(added.status).to.equal(200);

      const graceContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const grace = await graceContext.newPage();
      try {
        await signIn(grace, server.url, 'grace', 'grace-pass');
        await switcher(grace, 'shared-lab').waitFor();
        await grace.goto(`${server.url}/settings/namespace`);
        // A member who is not the owner is offered to leave, not to delete.
        await grace.getByRole('button', { name: 'Leave namespace' }).click();
        expect(await grace.getByRole('button', { name: 'Delete namespace' }).count()).to.equal(0);
        const dialog = grace.getByRole('dialog', { name: 'Leave shared-lab?' });
        await expectAccessible(grace, 'leave namespace dialog');
        await dialog.getByRole('button', { name: 'Leave' }).click();
        await grace.getByText('You left shared-lab').waitFor();
        await switcher(grace, 'No namespace').waitFor();
        const after = await authOf(grace);
        expect(after.tenant).to.equal('');
        expect(await namespaces(after)).to.deep.equal([]);
        const members = (
          (await (await call(ada, 'GET', `/api/namespaces/${shared.tenant_id}`)).json()) as Namespace
        ).members;
        expect(members.map((m) => m.email ?? m.id)).to.not.include('grace@example.com');
        expect(members).to.have.length(1);
        await expectAccessible(grace, 'home without a namespace');
      } finally {
        await graceContext.close();
      }
    },
  );
});
