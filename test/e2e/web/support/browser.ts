import { expect } from 'chai';
import { type Browser, chromium, type Page } from 'playwright-core';
import { eventually } from '../../../support/agent-process';
import { axeSource } from './console-server';

/** Debian's Chromium, driven by playwright-core (nothing is downloaded). */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

async function violationsOf(page: Page): Promise<AxeViolation[]> {
  return (await page.evaluate(
    `window.axe.run(document).then((result) => result.violations.map((v) => ({
      id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })),
    })))`,
  )) as AxeViolation[];
}

/**
 * Runs axe-core on the page in the dark and in the light theme and fails on any serious or critical violation
 * (with `anyImpact`, on any violation at all, minor and moderate too), naming the theme and each violation. The
 * theme is switched the way the console's toggle switches it (the `data-theme` attribute), then put back, so the
 * page is left as the person had it.
 */
export async function expectAccessible(
  page: Page,
  screen: string,
  o: { anyImpact?: boolean } = {},
): Promise<void> {
  // The page runs in the browser, which this Node-typed project does not describe: the checks go in as text.
  const loaded = await page.evaluate('typeof window.axe !== "undefined"');
  // Evaluated through the DevTools protocol, not added as a <script>: the console's CSP rightly refuses inline ones.
  if (!loaded) await page.evaluate(axeSource());
  const before = (await page.evaluate('document.documentElement.dataset.theme ?? ""')) as string;
  const failures: string[] = [];
  try {
    for (const theme of ['dark', 'light']) {
      // Two frames, so that style recalculation and the short colour transitions have settled before axe
      // reads computed colours.
      // Then every colour transition the switch started runs to its end: on a busy machine 200 ms may not be
      // enough, and axe would read a colour half-way between the themes.
      await page.evaluate(`new Promise((resolve) => {
        document.documentElement.dataset.theme = ${JSON.stringify(theme)};
        requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(resolve, 200)));
      }).then(() => Promise.all(document.getAnimations()
        .filter((a) => a instanceof CSSTransition)
        .map((a) => a.finished.catch(() => undefined))))`);
      const bad = (await violationsOf(page)).filter(
        (v) => o.anyImpact || v.impact === 'serious' || v.impact === 'critical',
      );
      for (const v of bad)
        failures.push(
          `[${theme}] ${v.impact} ${v.id}: ${v.help}\n    at ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`,
        );
    }
  } finally {
    await page.evaluate(
      before
        ? `document.documentElement.dataset.theme = ${JSON.stringify(before)}`
        : 'delete document.documentElement.dataset.theme',
    );
  }
  if (failures.length > 0)
    throw new Error(
      `${screen}: ${failures.length} ${o.anyImpact ? '' : 'serious or critical '}accessibility violation(s):\n  ${failures.join('\n  ')}`,
    );
}

export interface Person {
  name: string;
  email: string;
  username: string;
  password: string;
}

export const owner: Person = {
  name: 'Ada Lovelace',
  email: 'ada@example.com',
  username: 'ada',
  password: 'correct-horse',
};

/** Goes through the first-run screen with the printed link, as the person running the server would. */
export async function completeSetup(page: Page, setupUrl: string, person: Person = owner): Promise<void> {
  await page.goto(setupUrl);
  await page.getByLabel('Full name').fill(person.name);
  await page.getByLabel('Email').fill(person.email);
  await page.getByLabel('Username').fill(person.username);
  await page.getByLabel('Password', { exact: true }).fill(person.password);
  await page.getByLabel('Confirm password').fill(person.password);
  await page.getByRole('button', { name: 'Create account' }).click();
}

export async function signIn(page: Page, url: string, username: string, password: string): Promise<void> {
  await page.goto(url);
  await page.getByLabel('Username or email').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** Fails when the page is wider than the screen (the body scrolls sideways). */
export async function noWiderThanScreen(page: Page, screen: string): Promise<void> {
  const widths = (await page.evaluate(
    '[document.documentElement.scrollWidth, window.innerWidth]',
  )) as number[];
  expect(widths[0], `${screen}: page width against the screen`).to.be.at.most(widths[1] as number);
}

/** Waits until the table named `table` lists exactly the devices `expected` (in any order), naming what it saw. */
export async function tableShowsDevices(page: Page, table: string, expected: string[]): Promise<void> {
  const want = [...expected].sort().join(',');
  let seen = '';
  await eventually(
    async () => {
      const names = await page
        .getByRole('table', { name: table })
        .locator('tbody tr a[href^="/device/"]:not(.btn)')
        .allTextContents();
      seen = names.sort().join(',');
      return seen === want || undefined;
    },
    `${table} to show ${want}`,
    10_000,
  ).catch(() => {
    throw new Error(`${table}: expected ${want}, saw ${seen}`);
  });
}
