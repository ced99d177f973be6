import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import pg from 'pg';
import { agentAuthRequest } from '../../support/device-keys';
import { ServerProcess } from '../../support/process-server';
import { expectAccessible, launchBrowser, signIn } from '../web/support/browser';

const exec = promisify(execFile);
const repo = path.resolve('.');
const example = path.join(repo, 'examples/hello-plugin');

/**
 * Builds a fresh copy of Gatehouse in `dir` as a self-hoster has it: the repository's files (not examples/), its
 * built console, and its installed packages. node_modules is copied as hard links (quick, and npm in the copy
 * replaces files rather than writing into them); its workspace links are relative, so they lead to the copy's own
 * code. Nothing is downloaded.
 */
function freshCopy(dir: string): void {
  const files = execFileSyncLines('git', ['ls-files', '-co', '--exclude-standard']).filter(
    (f) => !f.startsWith('examples/') && existsSync(path.join(repo, f)),
  );
  for (const f of files) cpSync(path.join(repo, f), path.join(dir, f));
  // Built, not tracked: the console the server serves, and the bundled plugins' console modules.
  for (const built of [
    'web/dist',
    ...readdirSync(path.join(repo, 'plugins')).map((p) => `plugins/${p}/web/dist`),
  ]) {
    if (existsSync(path.join(repo, built)))
      cpSync(path.join(repo, built), path.join(dir, built), { recursive: true });
  }
  // Packages npm could not hoist sit in their workspace's own node_modules (the console's, a plugin's).
  const workspaces = ['web', ...readdirSync(path.join(repo, 'plugins')).map((p) => `plugins/${p}`)];
  for (const modules of ['node_modules', ...workspaces.map((w) => `${w}/node_modules`)]) {
    if (!existsSync(path.join(repo, modules))) continue;
    execFileSync('cp', ['-al', path.join(repo, modules), path.join(dir, modules)]);
    // npm rewrites its record of the tree; the copy gets its own rather than a link to this checkout's.
    rmSync(path.join(dir, modules, '.package-lock.json'), { force: true });
  }
}

function execFileSyncLines(cmd: string, args: string[]): string[] {
  return execFileSync(cmd, args, { cwd: repo, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
    .split('\n')
    .filter(Boolean);
}

/** A digest of every file of the installation outside node_modules: what "no Gatehouse file changed" compares. */
function digestOfFiles(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (rel: string) => {
    for (const e of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = path.join(rel, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'node_modules') walk(r);
      } else if (e.isFile()) {
        out.set(
          r,
          createHash('sha256')
            .update(readFileSync(path.join(dir, r)))
            .digest('hex'),
        );
      }
    }
  };
  walk('');
  return out;
}

/**
 * The example plugin, packed with `npm pack` and installed with `npm install` into a fresh copy of
 * Gatehouse, listed in a config file of its own, runs in a server process started from that copy; its route, its
 * table, its hook handler, its CLI command and its console screen are used through the API, the CLI and Chromium,
 * and no Gatehouse file changes.
 */
describe('the example plugin, packed and installed into a fresh Gatehouse', function () {
  this.timeout(600_000);
  let work: string;
  let gatehouse: string;
  let site: string;
  let config: string;
  let original: Map<string, string>;
  let server: ServerProcess | undefined;

  const cli = async (...args: string[]) => {
    const { stdout } = await exec(process.execPath, [path.join(gatehouse, 'bin/gatehouse.js'), ...args], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        GATEHOUSE_CONFIG: config,
        GATEHOUSE_DATA_DIR: server?.dataDir,
        ...(server?.databaseUrl ? { GATEHOUSE_DATABASE_URL: server.databaseUrl } : {}),
      },
      timeout: 120_000,
    });
    return stdout;
  };

  before(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'gh-example-'));
    gatehouse = path.join(work, 'gatehouse');
    site = path.join(work, 'site');
    mkdirSync(gatehouse);
    mkdirSync(site);
    freshCopy(gatehouse);
    original = digestOfFiles(gatehouse);

    // npm pack builds the plugin (its prepack script) and writes the tarball a registry would hold.
    rmSync(path.join(example, 'dist'), { recursive: true, force: true });
    const packed = await exec('npm', ['pack', '--json', '--pack-destination', work], {
      cwd: example,
      timeout: 300_000,
    });
    // stdout also carries the prepack build's own output (vite's, with colour codes that contain '['); npm's JSON
    // report is the array that starts on a line of its own.
    const report = packed.stdout.search(/^\[\s*\{/m);
    expect(report, `npm pack printed no JSON report:\n${packed.stdout}`).to.be.at.least(0);
    const [pack] = JSON.parse(packed.stdout.slice(report)) as { filename: string }[];
    const tarball = path.join(work, pack?.filename ?? 'no tarball');
    expect(existsSync(tarball), tarball).to.equal(true);

    // Installed beside Gatehouse as an operator does, from the tarball alone (no registry: --offline); --no-save
    // leaves Gatehouse's package.json and lockfile as they were.
    await exec(
      'npm',
      ['install', '--offline', '--no-save', '--no-audit', '--no-fund', '--ignore-scripts', tarball],
      {
        cwd: gatehouse,
        timeout: 300_000,
      },
    );
    expect(existsSync(path.join(gatehouse, 'node_modules/gatehouse-plugin-hello/dist/index.js'))).to.equal(
      true,
    );

    // The operator's own config file, outside the installation: community plus the plugin, with its settings.
    config = path.join(site, 'gatehouse.yaml');
    writeFileSync(
      config,
      [
        'plugins: [community, gatehouse-plugin-hello]',
        'pluginConfig:',
        '  hello:',
        "    welcome: 'Hello there,'",
        '',
      ].join('\n'),
    );
    server = await ServerProcess.start(
      { GATEHOUSE_CONFIG: config },
      { bin: path.join(gatehouse, 'bin/gatehouse.js') },
    );
  });

  after(async () => {
    await server?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  let token: string;
  let tenant: string;

  it('runs: /info names the plugin, and the plugin applied its migration', async () => {
    const s = server as ServerProcess;
    const info = await s.api('GET', '/info');
    expect(info.body.plugins).to.deep.equal(['community', 'hello']);
    const owner = await s.setup();
    token = owner.token;
    tenant = owner.tenant;
    if (s.databaseUrl) {
      const client = new pg.Client({ connectionString: s.databaseUrl });
      await client.connect();
      try {
        const applied = await client.query('select name from gatehouse_migrations where name like $1', [
          'hello/%',
        ]);
        expect(applied.rows.map((r) => r.name)).to.deep.equal(['hello/20270101000000_greetings']);
      } finally {
        await client.end();
      }
    }
  });

  it('posts a greeting when a device is accepted (a core event), with the configured words', async () => {
    const s = server as ServerProcess;
    const { body, headers } = agentAuthRequest({
      tenant,
      hostname: 'web-01',
      mac: '02:00:00:00:13:06',
      keyLabel: 'example-plugin-device',
    });
    const auth = await fetch(`${s.url}/api/devices/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    expect(auth.status, await auth.clone().text()).to.equal(200);
    const { uid } = (await auth.json()) as { uid: string };
    const empty = await s.api('GET', '/api/hello/greetings', { token });
    expect(empty.body, 'nothing before the acceptance').to.deep.equal([]);
    const accepted = await s.api('PATCH', `/api/devices/${uid}/accept`, { token });
    expect(accepted.status, JSON.stringify(accepted.body)).to.equal(200);
    const list = await s.api('GET', '/api/hello/greetings', { token });
    expect(list.status).to.equal(200);
    expect(list.body.map((g: { text: string; author: string }) => [g.text, g.author])).to.deep.equal([
      ['Hello there, web-01!', 'hello'],
    ]);
  });

  it('serves its route: validated, permission-checked, paged with X-Total-Count, in the OpenAPI document', async () => {
    const s = server as ServerProcess;
    const posted = await s.api('POST', '/api/hello/greetings', { token, body: { text: 'hi, all' } });
    expect(posted.status, JSON.stringify(posted.body)).to.equal(200);
    expect(posted.body).to.include({ text: 'hi, all', author: 'ada' });
    const tooLong = await s.api('POST', '/api/hello/greetings', { token, body: { text: 'x'.repeat(141) } });
    expect(tooLong.status).to.equal(400);
    const unknown = await s.api('POST', '/api/hello/greetings', { token, body: { text: 'a', extra: 1 } });
    expect(unknown.status, 'unknown body fields are refused on every route').to.equal(400);
    expect((await s.api('GET', '/api/hello/greetings')).status, 'deny by default').to.equal(401);
    const page = await fetch(`${s.url}/api/hello/greetings?per_page=1`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(page.headers.get('x-total-count')).to.equal('2');
    expect(((await page.json()) as { text: string }[]).map((g) => g.text)).to.deep.equal(['hi, all']);
    const doc = await s.api('GET', '/openapi/community.json');
    expect(Object.keys(doc.body.paths)).to.include.members(['/api/hello/greetings', '/api/hello/summary']);
  });

  it('adds its CLI command, which talks to the running server through gatehouse.sock', async () => {
    const help = await cli('--help');
    expect(help).to.match(/^\s+hello\s+The hello plugin/m);
    const ns = await (server as ServerProcess).api('GET', `/api/namespaces/${tenant}`, { token });
    const out = await cli('hello', 'summary');
    expect(out).to.equal(`${ns.body.name}\t2\n`);
    // The server answered the command (not a store opened beside it): its request log says so.
    await (server as ServerProcess).loggedLine(/"method":"GET","path":"\/api\/hello\/summary","status":200/);
  });

  it('shows its console screen in Chromium, served by the server and loaded through /info', async () => {
    const s = server as ServerProcess;
    const info = await s.api('GET', '/info');
    expect(info.body.console_modules).to.deep.include({
      plugin: 'hello',
      url: '/console/plugins/hello/index.js',
    });
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(e.message));
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(m.text());
      });
      await signIn(page, s.url, 'ada', 'correct-horse');
      await page.getByRole('link', { name: 'Greetings' }).click();
      await page.getByRole('heading', { name: 'Greetings', exact: true }).waitFor();
      // What the hook and the API posted, read through the plugin's route by the console's client.
      const board = page.getByRole('list', { name: 'Greetings' });
      await board.getByText('Hello there, web-01!').waitFor();
      await board.getByText('hi, all').waitFor();
      await page.getByRole('textbox', { name: 'Greeting' }).fill('hello from the console');
      await page.getByRole('button', { name: 'Post greeting' }).click();
      await board.getByText('hello from the console').waitFor();
      await page.getByText('Latest greetings (3)').waitFor();
      expect(problems).to.deep.equal([]);
      await expectAccessible(page, 'greetings screen of the example plugin');
    } finally {
      await browser.close();
    }
    const list = await s.api('GET', '/api/hello/greetings', { token });
    expect(list.body.map((g: { text: string }) => g.text)).to.include('hello from the console');
  });

  it('changed no file of the Gatehouse copy', () => {
    const after = digestOfFiles(gatehouse);
    const changed = [...new Set([...original.keys(), ...after.keys()])].filter(
      (f) => original.get(f) !== after.get(f),
    );
    expect(changed).to.deep.equal([]);
  });
});
