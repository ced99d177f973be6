// `npm run docs:serve -- --port P --host H` as a person types it from the repository root:
// the options reach the server, as with `docusaurus serve`. The site
// served is a two-file stand-in for a build, so no docs build is needed here.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect } from 'chai';
import { docsDir } from './docs-site';

const repoDir = resolve(docsDir, '..');

function freePort(host: string): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once('error', fail);
    probe.listen(0, host, () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => done(port));
    });
  });
}

interface Run {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function docsServe(args: string[], site: string): Run {
  let output = '';
  // Its own process group: npm runs the server as a grandchild, and stopping must reach it.
  const child = spawn('npm', ['run', '--silent', 'docs:serve', '--', ...args], {
    cwd: repoDir,
    env: { ...process.env, DOCS_BUILD_DIR: site, PORT: '', HOST: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return { child, output: () => output, exited };
}

async function stop(run: Run): Promise<void> {
  if (run.child.exitCode !== null || run.child.pid === undefined) return;
  try {
    process.kill(-run.child.pid, 'SIGTERM');
  } catch {
    // already gone
  }
  await run.exited;
}

async function waitForOutput(run: Run, pattern: RegExp, ms = 30_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const match = pattern.exec(run.output());
    if (match) return match;
    if (run.child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no ${pattern} in the output:\n${run.output()}`);
}

describe('npm run docs:serve -- --port P --host H', function () {
  this.timeout(90_000);
  let site: string;
  const runs: Run[] = [];

  before(() => {
    site = mkdtempSync(join(tmpdir(), 'gatehouse-docs-serve-'));
    writeFileSync(join(site, 'index.html'), '<!doctype html><title>Docs</title><h1>Served docs home</h1>');
    writeFileSync(join(site, '404.html'), '<!doctype html><title>Not found</title><h1>Page Not Found</h1>');
  });
  after(async () => {
    await Promise.all(runs.map(stop));
    rmSync(site, { recursive: true, force: true });
  });

  it('listens on the port and host given, and only there', async () => {
    // 127.0.0.2 is loopback too on Linux: a server that ignored --host would be on 127.0.0.1 instead.
    const port = await freePort('127.0.0.2');
    const run = docsServe(['--port', String(port), '--host', '127.0.0.2'], site);
    runs.push(run);
    await waitForOutput(run, new RegExp(`at http://127\\.0\\.0\\.2:${port}/`));
    const home = await fetch(`http://127.0.0.2:${port}/`);
    expect(home.status).to.equal(200);
    expect(await home.text()).to.contain('Served docs home');
    const missing = await fetch(`http://127.0.0.2:${port}/no/such/page`);
    expect(missing.status).to.equal(404);
    const elsewhere = await fetch(`http://127.0.0.1:${port}/`).then(
      (r) => r.status,
      () => 'refused',
    );
    expect(elsewhere).to.equal('refused');
    await stop(run);
  });

  it('takes --port=P and -p P as docusaurus serve does', async () => {
    for (const args of [(p: number) => [`--port=${p}`], (p: number) => ['-p', String(p)]]) {
      const port = await freePort('127.0.0.1');
      const run = docsServe(args(port), site);
      runs.push(run);
      await waitForOutput(run, new RegExp(`at http://127\\.0\\.0\\.1:${port}/`));
      expect((await fetch(`http://127.0.0.1:${port}/`)).status).to.equal(200);
      await stop(run);
    }
  });

  it('refuses a bad port or an unknown option with a message and exit code 2', async () => {
    for (const [args, complaint] of [
      [['--port', 'eighty'], /--port must be a whole number from 0 to 65535, got "eighty"/],
      [['--port', '70000'], /--port must be a whole number/],
      [['--bogus'], /Unknown option '--bogus'/],
    ] as const) {
      const run = docsServe([...args], site);
      runs.push(run);
      const code = await run.exited;
      expect(run.output(), args.join(' ')).to.match(complaint);
      expect(run.output()).to.contain('Usage: npm run docs:serve');
      expect(code, args.join(' ')).to.not.equal(0);
    }
  });
});
