import type { PermissionRow } from '@gatehouse/core/permissions';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { expectAccessible, noWiderThanScreen, owner, signIn } from './support/browser';
import type { ConsoleServer } from './support/console-server';
import {
  addTeam,
  ownerApi,
  registerInConsole,
  type SignedInConsole,
  signedInConsole,
  team,
} from './support/signed-in';

// The console follows the caller's role: an operator and an observer see the actions their role cannot take
// disabled, with the reason the server's permission table gives, and an owner sees them enabled. The Roles card is
// compared with the table as `gatehouse permissions --json` prints it from the route tables, so the card and the
// checks the router makes cannot drift apart. At 1280 and 390 px, axe clean, never wider than the screen.

type Role = 'owner' | 'administrator' | 'operator' | 'observer';
const roleOrder: Role[] = ['owner', 'administrator', 'operator', 'observer'];
const label = (r: Role) => r.charAt(0).toUpperCase() + r.slice(1);

/** What the Roles card must say for each role, from the server's table: the summaries each role adds. */
function expectedCard(rows: PermissionRow[]): Record<Role, string> {
  const member = rows.filter((r) => r.role && r.callers.user && !r.instanceAdmin);
  const lines = {} as Record<Role, string>;
  roleOrder.forEach((role, i) => {
    const below = roleOrder[i + 1];
    const summaries = [...new Set(member.filter((r) => r.role === role).map((r) => r.summary))];
    const lead = below ? `Everything ${/^[aeiou]/.test(below) ? 'an' : 'a'} ${below} can do, and:` : 'Can:';
    lines[role] = `${lead} ${summaries.length ? summaries.join('; ') : 'nothing more'}.`;
  });
  return lines;
}

describe('web console: actions follow the signed-in role, from the server permission table', function () {
  this.timeout(300_000);
  let signedIn: SignedInConsole | undefined;
  let server: ConsoleServer;
  let auth: { token: string; tenant: string };
  let table: PermissionRow[];

  let api: ReturnType<typeof ownerApi>;
  const register = (hostname: string, mac: string) => registerInConsole({ server, auth }, { hostname, mac });

  const people: Record<'owner' | 'operator' | 'observer', { username: string; password: string }> = {
    owner: { username: owner.username, password: owner.password },
    ...team,
  };

  before(async () => {
    signedIn = await signedInConsole();
    ({ server, auth } = signedIn);
    table = JSON.parse(server.cli('permissions', 'community', '--json')) as PermissionRow[];
    api = ownerApi(signedIn);
    await addTeam(signedIn, label);
    await register('edge-waiting', '02:00:00:00:91:01');
    const kept = await register('edge-kept', '02:00:00:00:91:02');
    await api('PATCH', `/api/devices/${kept}/accept`);
  });
  after(async () => {
    await signedIn?.close();
  });

  /** The button's state: absent, enabled, or disabled with its tooltip. */
  const state = async (page: Page, name: string) => {
    const button = page.getByRole('button', { name, exact: true });
    if ((await button.count()) === 0) return 'absent';
    if (await button.first().isEnabled()) return 'enabled';
    return `disabled: ${await button.first().getAttribute('title')}`;
  };

  for (const width of [1280, 390]) {
    for (const role of ['owner', 'operator', 'observer'] as const) {
      it(`as ${role} at ${width} px`, async () => {
        const context = await signedIn!.browser.newContext({ viewport: { width, height: 900 } });
        const page = await context.newPage();
        try {
          await signIn(page, server.url, people[role].username, people[role].password);
          await page.getByRole('heading', { name: /^Welcome/ }).waitFor();
          const admin = role === 'owner';
          const operatorOrMore = role !== 'observer';

          await page.goto(`${server.url}/devices/pending`);
          await page.getByText('edge-waiting').first().waitFor();
          expect(await state(page, 'Accept edge-waiting')).to.equal(
            admin ? 'enabled' : 'disabled: Only owners and administrators can accept devices',
          );
          expect(await state(page, 'Reject edge-waiting')).to.equal(
            admin ? 'enabled' : 'disabled: Only owners and administrators can reject devices',
          );
          await expectAccessible(page, `pending devices as ${role}`);
          await noWiderThanScreen(page, `pending devices as ${role}`);

          await page.goto(`${server.url}/devices`);
          await page.getByText('edge-kept').first().waitFor();
          expect(await state(page, 'Rename edge-kept')).to.equal(
            operatorOrMore
              ? 'enabled'
              : 'disabled: Only owners, administrators and operators can rename devices',
          );
          expect(await state(page, 'Edit tags of edge-kept')).to.equal(
            operatorOrMore
              ? 'enabled'
              : 'disabled: Only owners, administrators and operators can change the tags of devices',
          );
          expect(await state(page, 'Remove edge-kept')).to.equal(
            admin ? 'enabled' : 'disabled: Only owners and administrators can remove devices',
          );

          await page.goto(`${server.url}/firewall`);
          await page.getByRole('heading', { name: 'Firewall rules', exact: true }).waitFor();
          expect(await state(page, 'Add rule')).to.equal(
            admin ? 'enabled' : 'disabled: Only owners and administrators can add firewall rules',
          );
          await page.goto(`${server.url}/public-keys`);
          await page.getByRole('heading', { name: 'Public keys', exact: true }).waitFor();
          expect(await state(page, 'Add public key')).to.equal(
            admin ? 'enabled' : 'disabled: Only owners and administrators can add public keys',
          );

          await page.goto(`${server.url}/settings/members`);
          const card = page.locator('.card', {
            has: page.getByRole('heading', { name: 'Roles', exact: true }),
          });
          await card.waitFor();
          expect(await state(page, 'Add member')).to.equal(
            admin ? 'enabled' : 'disabled: Only owners and administrators can add members',
          );
          const expected = expectedCard(table);
          for (const r of roleOrder) {
            const text = (await card.locator(`dd[data-role="${r}"]`).textContent())?.trim();
            expect(text, `the Roles card for ${r}`).to.equal(expected[r]);
          }
          // The table says what the checks above rely on: accepting needs an administrator.
          const accept = table.find((r) => r.method === 'PATCH' && r.path === '/api/devices/{uid}/accept');
          expect(accept?.role).to.equal('administrator');
          expect(expected.operator).to.not.include('Accept a device');
          await expectAccessible(page, `members as ${role}`);
          await noWiderThanScreen(page, `members as ${role}`);

          await page.goto(`${server.url}/settings/api-keys`);
          await page.getByRole('heading', { name: 'API keys', exact: true }).waitFor();
          expect(await state(page, 'Create API key')).to.equal(
            admin ? 'enabled' : 'disabled: Only owners and administrators can create API keys',
          );
          if (!admin) await page.getByText('Only owners and administrators can see API keys').waitFor();
        } finally {
          await context.close();
        }
      });
    }
  }
});
