import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { expectAccessible } from './support/browser';
import type { ConsoleServer } from './support/console-server';
import { type SignedInConsole, signedInConsole } from './support/signed-in';

// An owner writes firewall rules in the console (add, edit, delete), then renames and deletes the tags those
// rules use from the tags screen; every change is checked against the real API as well as on screen.

interface Rule {
  id: string;
  action: string;
  active: boolean;
  priority: number;
  source_ip: string;
  username: string;
  filter: { hostname: string } | { tags: string[] };
}

describe('web console: firewall rules and tags', function () {
  this.timeout(60_000);
  let signedIn: SignedInConsole | undefined;
  let server: ConsoleServer;
  let page: Page;

  const api = async <T>(p: string): Promise<T> => {
    const auth = JSON.parse((await page.evaluate('localStorage.getItem("gatehouse.auth")')) as string) as {
      token: string;
    };
    const answer = await fetch(`${server.url}${p}`, { headers: { Authorization: `Bearer ${auth.token}` } });
    expect(answer.status, `GET ${p}`).to.equal(200);
    return (await answer.json()) as T;
  };

  before(async () => {
    signedIn = await signedInConsole();
    ({ server, page } = signedIn);
  });
  after(async () => {
    await signedIn?.close();
  });

  it('shows the home view and the empty screens without accessibility faults', async () => {
    await expectAccessible(page, 'home');
    await page.goto(`${server.url}/devices`);
    await page.getByRole('heading', { name: 'Devices', exact: true }).waitFor();
    await expectAccessible(page, 'devices (empty)');
    await page.goto(`${server.url}/tags`);
    await page.getByText('No tags yet').waitFor();
    await expectAccessible(page, 'tags (empty)');
    await page.goto(`${server.url}/sessions`);
    await page.getByText('No sessions yet').waitFor();
    await expectAccessible(page, 'sessions (empty)');
  });

  it('adds a deny rule for tagged devices and lists it', async () => {
    await page.goto(`${server.url}/firewall`);
    await page.getByText('No firewall rules').waitFor();
    await expectAccessible(page, 'firewall rules (empty)');
    await page.getByRole('button', { name: 'Add rule' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'Add a firewall rule' });
    await dialog.getByLabel('Action').selectOption('deny');
    await dialog.getByLabel('Priority').fill('10');
    await dialog.getByLabel('Source IP pattern').fill('^10\\.');
    await dialog.getByLabel('Device user pattern').fill('root');
    await dialog.getByLabel('Applies to').selectOption('tags');
    await dialog.getByLabel('Tags').fill('prod, edge');
    await expectAccessible(page, 'add firewall rule dialog');
    await dialog.getByRole('button', { name: 'Add rule' }).click();
    await page.getByText('Rule created').waitFor();
    const table = page.getByRole('table', { name: 'Firewall rules' });
    const row = table.getByRole('row').filter({ hasText: 'Deny' });
    await row.waitFor();
    for (const text of ['10', '^10\\.', 'root', 'prod', 'edge', 'Active'])
      expect(await row.getByText(text, { exact: true }).count(), text).to.equal(1);
    await expectAccessible(page, 'firewall rules');
    const rules = await api<Rule[]>('/api/firewall/rules');
    expect(rules).to.have.length(1);
    const { action, active, priority, source_ip, username, filter } = rules[0] as Rule;
    expect({ action, active, priority, source_ip, username, filter }).to.deep.equal({
      action: 'deny',
      active: true,
      priority: 10,
      source_ip: '^10\\.',
      username: 'root',
      filter: { tags: ['prod', 'edge'] },
    });
  });

  it('edits the rule: allow, lower priority, a hostname pattern, inactive', async () => {
    await page.getByRole('button', { name: 'Edit rule with priority 10' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit rule' });
    expect(await dialog.getByLabel('Tags').inputValue()).to.equal('prod, edge');
    await dialog.getByLabel('Action').selectOption('allow');
    await dialog.getByLabel('Priority').fill('5');
    await dialog.getByLabel('Applies to').selectOption('hostname');
    await dialog.getByLabel('Device name pattern').fill('^web-');
    await dialog.getByRole('switch', { name: 'Active' }).click();
    await dialog.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Rule saved').waitFor();
    const row = page
      .getByRole('table', { name: 'Firewall rules' })
      .getByRole('row')
      .filter({ hasText: 'Allow' });
    await row.getByText('Inactive').waitFor();
    expect(await row.getByText('^web-', { exact: true }).count()).to.equal(1);
    const [rule] = await api<Rule[]>('/api/firewall/rules');
    expect(rule).to.include({ action: 'allow', active: false, priority: 5 });
    expect(rule?.filter).to.deep.equal({ hostname: '^web-' });
  });

  it('renames and deletes tags from the tags screen, and the rules follow', async () => {
    // Put the tags back on the rule, then add a second rule so a tag is shared.
    await page.getByRole('button', { name: 'Edit rule with priority 5' }).click();
    let dialog = page.getByRole('dialog', { name: 'Edit rule' });
    await dialog.getByLabel('Applies to').selectOption('tags');
    await dialog.getByLabel('Tags').fill('prod, edge');
    await dialog.getByRole('button', { name: 'Save' }).click();
    // The dialog closes once the save answered; the previous test's 'Rule saved' toast may still be on screen.
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('button', { name: 'Add rule' }).first().click();
    dialog = page.getByRole('dialog', { name: 'Add a firewall rule' });
    await dialog.getByLabel('Priority').fill('20');
    await dialog.getByLabel('Applies to').selectOption('tags');
    await dialog.getByLabel('Tags').fill('prod');
    await dialog.getByRole('button', { name: 'Add rule' }).click();
    await page.getByRole('button', { name: 'Edit rule with priority 20' }).waitFor();

    await page.goto(`${server.url}/tags`);
    const tags = page.getByRole('table', { name: 'Tags' });
    await tags.getByText('prod', { exact: true }).waitFor();
    expect(await tags.locator('tbody tr').allTextContents()).to.have.length(2);
    await expectAccessible(page, 'tags');

    await page.getByRole('button', { name: 'Rename tag prod' }).click();
    const rename = page.getByRole('dialog', { name: 'Rename prod' });
    await rename.getByLabel('New name').fill('pr');
    await rename.getByRole('button', { name: 'Rename' }).click();
    await rename.getByText('A tag is 3 to 255 characters long.').waitFor();
    await rename.getByLabel('New name').fill('production');
    await expectAccessible(page, 'rename tag dialog');
    await rename.getByRole('button', { name: 'Rename' }).click();
    await page.getByText('Tag renamed').waitFor();
    await tags.getByText('production', { exact: true }).waitFor();
    expect(await tags.getByText('prod', { exact: true }).count()).to.equal(0);

    await page.getByRole('button', { name: 'Delete tag edge' }).click();
    const remove = page.getByRole('dialog', { name: 'Delete edge?' });
    await expectAccessible(page, 'delete tag dialog');
    await remove.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('Tag deleted').waitFor();
    await tags.getByText('edge', { exact: true }).waitFor({ state: 'detached' });

    const rules = await api<Rule[]>('/api/firewall/rules');
    expect(rules.map((r) => [r.priority, r.filter]).sort()).to.deep.equal([
      [20, { tags: ['production'] }],
      [5, { tags: ['production'] }],
    ]);
    await page.goto(`${server.url}/firewall`);
    const table = page.getByRole('table', { name: 'Firewall rules' });
    await table.getByText('production').first().waitFor();
    expect(await table.getByText('production', { exact: true }).count()).to.equal(2);
  });

  it('deletes a rule after asking', async () => {
    await page.getByRole('button', { name: 'Delete rule with priority 20' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this rule?' });
    await expectAccessible(page, 'delete firewall rule dialog');
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('Rule deleted').waitFor();
    await page.getByRole('button', { name: 'Delete rule with priority 20' }).waitFor({ state: 'detached' });
    const rules = await api<Rule[]>('/api/firewall/rules');
    expect(rules.map((r) => r.priority)).to.deep.equal([5]);
  });

  it('starts a new rule as allow after the others, says what it matches, and asks before refusing everything', async () => {
    for (const [width, height, priority] of [
      [1280, 900, '10'],
      [390, 844, '20'],
    ] as const) {
      await page.setViewportSize({ width, height });
      await page.goto(`${server.url}/firewall`);
      await page.getByRole('button', { name: 'Edit rule with priority 5' }).waitFor();
      await page.getByRole('button', { name: 'Add rule' }).first().click();
      const dialog = page.getByRole('dialog', { name: 'Add a firewall rule' });
      const summary = dialog.getByTestId('rule-summary');
      // Saved unchanged, a new rule lets connections through, after the highest priority there is.
      expect(await dialog.getByLabel('Action').inputValue(), `${width} px`).to.equal('allow');
      expect(await dialog.getByLabel('Priority').inputValue(), `${width} px`).to.equal(priority);
      expect(await summary.textContent()).to.equal(
        'Allows SSH and web terminal connections from any address as any user to every device.',
      );
      expect(await dialog.getByText('This rule refuses every connection').count()).to.equal(0);

      await dialog.getByLabel('Action').selectOption('deny');
      expect(await summary.textContent()).to.equal(
        'Denies SSH and web terminal connections from any address as any user to every device.',
      );
      const warning = dialog.getByRole('status').filter({ hasText: 'This rule refuses every connection' });
      await warning.waitFor();
      const confirm = dialog.getByLabel('I understand: refuse every connection');
      expect(await confirm.isChecked()).to.equal(false);
      await confirm.scrollIntoViewIfNeeded();
      const box = await confirm.boundingBox();
      expect((box?.x ?? -1) + (box?.width ?? 0), `the confirmation fits ${width} px`).to.be.at.most(width);
      await expectAccessible(page, `firewall rule refusing everything at ${width} px`);

      // Saving without the tick is refused on the spot, and nothing reaches the server.
      await dialog.getByRole('button', { name: 'Add rule' }).click();
      await dialog.getByText('Tick the box to save a rule that refuses every connection').waitFor();
      expect(await api<Rule[]>('/api/firewall/rules')).to.have.length(width === 1280 ? 1 : 2);

      // Narrowing the rule takes the warning away; so does switching it off.
      await dialog.getByLabel('Device user pattern').fill('^root$');
      expect(await summary.textContent()).to.equal(
        'Denies SSH and web terminal connections from any address as users matching ^root$ to every device.',
      );
      expect(await warning.count()).to.equal(0);
      await dialog.getByLabel('Device user pattern').fill('.*');
      await dialog.getByRole('switch', { name: 'Active' }).click();
      expect(await warning.count()).to.equal(0);
      expect(await summary.textContent()).to.contain('once switched on; inactive, it decides nothing');
      await dialog.getByRole('switch', { name: 'Active' }).click();
      await warning.waitFor();

      if (width === 1280) {
        await confirm.check();
        await dialog.getByRole('button', { name: 'Add rule' }).click();
        await page.getByText('Rule created').waitFor();
        const rules = await api<Rule[]>('/api/firewall/rules');
        const added = rules.find((r) => r.priority === 10);
        expect(added).to.include({ action: 'deny', active: true, source_ip: '.*', username: '.*' });
        expect(added?.filter).to.deep.equal({ hostname: '.*' });
      } else {
        await page.keyboard.press('Escape');
        await dialog.waitFor({ state: 'hidden' });
      }
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  });
});
