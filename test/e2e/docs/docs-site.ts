// Shared set-up of the docs browser tests: a build made at most once per run, the
// project's own static server on a free port, and Chromium that may only talk to 127.0.0.1.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';

export const docsDir = resolve(import.meta.dirname, '../../../docs');
export const buildDir = join(docsDir, 'build');

/** Routes of the site (docs pages are served at the site root). */
export const specRoutes = [
  '/',
  '/search',
  '/admin-guides/authentication/local/configuring',
  '/admin-guides/authentication/local/enabling-method',
  '/admin-guides/authentication/saml/authentication',
  '/admin-guides/authentication/saml/mapping',
  '/admin-guides/authentication/saml/signed_authn_requests',
  '/admin-guides/authentication/saml/configuring/disabling',
  '/admin-guides/authentication/saml/configuring/enabling-manual',
  '/admin-guides/authentication/saml/configuring/enabling-with-metadata',
  '/developers/agent/configuring',
  '/developers/agent/installing',
  '/developers/development',
  '/developers/openapi/cloud',
  '/developers/openapi/community',
  '/overview/concepts',
  '/overview/editions',
  '/overview/faq',
  '/overview/features',
  '/overview/getting-started/',
  '/overview/getting-started/cloud',
  '/overview/supported-platforms/',
  '/overview/supported-platforms/buildroot',
  '/overview/supported-platforms/freebsd',
  '/overview/supported-platforms/snap',
  '/overview/supported-platforms/wsl',
  '/overview/supported-platforms/yocto',
  '/self-hosted/administration',
  '/self-hosted/configuring',
  '/self-hosted/deploying',
  '/self-hosted/reference',
  '/self-hosted/troubleshooting',
  '/self-hosted/upgrading',
  '/user-guides/devices/adding',
  '/user-guides/devices/connecting',
  '/user-guides/devices/tagging',
  '/user-guides/devices/tunnels',
  '/user-guides/firewall/',
  '/user-guides/firewall/create',
  '/user-guides/firewall/policies',
  '/user-guides/namespaces/',
  '/user-guides/namespaces/connection-announcment',
  '/user-guides/namespaces/retrieving-your-tenant-id',
  '/user-guides/namespaces/switching',
  '/user-guides/security/publickey-authentication',
  '/user-guides/sessions/introduction',
  '/user-guides/sessions/session-recording',
  '/user-guides/settings/account/mfa/about-mfa',
  '/user-guides/settings/account/mfa/configure-mfa',
  '/user-guides/settings/account/mfa/logging-in',
  '/user-guides/settings/account/mfa/recovery-access',
  '/user-guides/settings/namespace/api-keys/',
  '/user-guides/settings/namespace/api-keys/create',
  '/user-guides/settings/namespace/api-keys/delete',
  '/user-guides/settings/namespace/api-keys/update',
  '/user-guides/settings/namespace/api-keys/use',
  '/user-guides/settings/namespace/members/',
  '/user-guides/settings/namespace/members/accept-invite',
  '/user-guides/settings/namespace/members/edit',
  '/user-guides/settings/namespace/members/invite',
  '/user-guides/settings/namespace/members/remove',
  '/user-guides/settings/namespace/members/roles',
];

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (['node_modules', 'build', '.docusaurus', 'generated'].includes(entry.name)) continue;
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Builds the site when there is no build or a docs source is newer than it. */
export function ensureDocsBuild(): void {
  const marker = join(buildDir, 'search-index.json');
  if (existsSync(marker) && statSync(marker).mtimeMs > newestSource(docsDir)) return;
  execFileSync('npm', ['run', 'build', '-w', 'docs'], {
    cwd: resolve(docsDir, '..'),
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 300_000,
  });
}

export interface DocsServer {
  url: string;
  stop(): Promise<void>;
}

/** Starts scripts/serve-site.mjs, the server `npm run docs:serve` runs, on a free port. */
export function startDocsServer(): Promise<DocsServer> {
  return new Promise((resolveServer, reject) => {
    const child: ChildProcess = spawn(process.execPath, [join(docsDir, 'scripts', 'serve-site.mjs')], {
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const timer = setTimeout(() => reject(new Error('docs server did not start in 10 s')), 10_000);
    child.once('exit', (code) => reject(new Error(`docs server exited with ${code}`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      const match = /at (http:\/\/127\.0\.0\.1:\d+)\//.exec(chunk.toString());
      if (!match?.[1]) return;
      clearTimeout(timer);
      resolveServer({
        url: match[1],
        stop: () =>
          new Promise((done) => {
            child.removeAllListeners('exit');
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    });
  });
}

export function launchChromium(): Promise<Browser> {
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

/**
 * A browser context whose every request is checked: anything not addressed to
 * 127.0.0.1 is aborted and remembered in `outside`, which the tests assert stays empty.
 */
export async function guardedContext(
  browser: Browser,
  outside: string[],
  options: Parameters<Browser['newContext']>[0] = {},
): Promise<BrowserContext> {
  const context = await browser.newContext(options);
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.protocol === 'data:' || url.protocol === 'blob:' || url.hostname === '127.0.0.1') {
      return route.fallback();
    }
    outside.push(route.request().url());
    return route.abort('blockedbyclient');
  });
  return context;
}

const entities: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", nbsp: ' ' };

/** The text of a page's HTML without scripts, styles and code, one line per block. */
export function visibleText(html: string): string {
  return html
    .replace(/<(script|style|pre|code|svg|template)\b[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<(br|\/p|\/div|\/li|\/h[1-6]|\/td|\/th|\/tr|\/summary|\/blockquote)\b[^>]*>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&(#?\w+);/g, (whole, name: string) =>
      name.startsWith('#x')
        ? String.fromCodePoint(Number.parseInt(name.slice(2), 16))
        : name.startsWith('#') && name !== '#39'
          ? String.fromCodePoint(Number(name.slice(1)))
          : (entities[name] ?? whole),
    );
}

/** Lines that are Markdown directive syntax left as text: `:::name`, `:::name[title]`, `::name`, a lone `:::`. */
export function unrendered(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => /^:{2,}(?:[A-Za-z][\w-]*|\s*$)/.test(line) || /(^|\s):{3,}[A-Za-z]/.test(line));
}

/** Hosts that only ever stand for "your server" in examples, never a real address to follow. */
export const placeholderHost = (host: string) =>
  /(^|\.)(example|invalid|test)$/.test(host) || /(^|\.)example\.(com|org|net)$/.test(host);
