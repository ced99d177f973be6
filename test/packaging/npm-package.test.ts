import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { freePort } from '../support/process-server';
import { documented, filled } from './documented';
import { release, version } from './release';

/**
 * The tarball route of the getting-started page, on this machine as if it had only Node.js: `npm install -g` with
 * no registry reachable (a registry address that refuses), from outside the checkout, then `gatehouse serve` from the
 * installed copy answers with this version, its console, and the agent builds it hands out; `gatehouse-docs` serves
 * the documentation it carries.
 */
describe('the server npm package, installed with npm install -g and started with gatehouse serve', function () {
  this.timeout(300_000);
  let dir: string;
  let prefix: string;
  let server: ChildProcess | undefined;
  let docs: ChildProcess | undefined;
  const env = () => ({
    PATH: `${path.join(prefix, 'bin')}:${path.dirname(process.execPath)}:/usr/bin:/bin`,
    HOME: dir,
    // No registry: everything must come from the tarball.
    npm_config_registry: 'http://127.0.0.1:9/',
    npm_config_prefix: prefix,
    npm_config_cache: path.join(dir, 'npm-cache'),
  });

  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-npm-'));
    prefix = path.join(dir, 'global');
  });
  after(async () => {
    for (const child of [server, docs]) {
      if (child && child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('installs with no registry and no compiler, and says its version', () => {
    // In the release folder, as the page says.
    execFileSync('sh', ['-c', documented.npmInstall], {
      cwd: release,
      env: { ...env(), npm_config_audit: 'false', npm_config_fund: 'false' },
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 240_000,
    });
    expect(
      existsSync(path.join(prefix, 'lib/node_modules/gatehouse/node_modules/@gatehouse/core/index.ts')),
    ).to.equal(true);
    expect(
      execFileSync('gatehouse', ['--version'], { cwd: dir, env: env(), encoding: 'utf8' }).trim(),
    ).to.equal(version);
  });

  it('serves the API, the console and the agent builds from the installed copy', async () => {
    const [httpPort, sshPort] = [await freePort(), await freePort()];
    server = spawn('sh', ['-c', `exec ${documented.serve}`], {
      cwd: dir,
      env: {
        ...env(),
        GATEHOUSE_DATA_DIR: path.join(dir, 'data'),
        GATEHOUSE_HTTP_HOST: '127.0.0.1',
        GATEHOUSE_HTTP_PORT: String(httpPort),
        GATEHOUSE_SSH_HOST: '127.0.0.1',
        GATEHOUSE_SSH_PORT: String(sshPort),
        GATEHOUSE_LOG_PRETTY: 'false',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    server.stdout?.on('data', (c: Buffer) => {
      log += c.toString();
    });
    server.stderr?.on('data', (c: Buffer) => {
      log += c.toString();
    });
    const url = `http://127.0.0.1:${httpPort}`;
    const deadline = Date.now() + 120_000;
    while (!log.includes('/setup?sign=')) {
      if (server.exitCode !== null || Date.now() > deadline)
        throw new Error(`gatehouse serve did not start:\n${log}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const info = (await (await fetch(`${url}/info`)).json()) as { version: string };
    expect(info.version).to.equal(version);
    const home = await fetch(`${url}/setup`, { headers: { Accept: 'text/html' } });
    expect(home.status).to.equal(200);
    expect(await home.text()).to.include('<div id="root">');
    const module = await fetch(`${url}/console/plugins/community/index.js`);
    expect(module.status).to.equal(200);
    const executable = await fetch(`${url}/agent/gatehouse-agent-linux-amd64`, { method: 'HEAD' });
    expect(executable.status).to.equal(200);
    expect(Number(executable.headers.get('content-length'))).to.be.above(50 * 1024 * 1024);
    const installer = await fetch(`${url}/agent/install.sh`);
    expect(await installer.text()).to.include('GATEHOUSE_SERVER_ADDRESS');
  });

  it('serves the documentation it carries with gatehouse-docs', async () => {
    // On a free port instead of 3000.
    docs = spawn('sh', ['-c', `exec ${filled(documented.docsServe, { '--port 3000': '--port 0' })}`], {
      cwd: dir,
      env: env(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      docs?.stdout?.on('data', (c: Buffer) => {
        out += c.toString();
        const match = /at (http:\/\/127\.0\.0\.1:\d+)\//.exec(out);
        if (match?.[1]) resolve(match[1]);
      });
      docs?.once('exit', (code) => reject(new Error(`gatehouse-docs exited with ${code}: ${out}`)));
    });
    const page = await fetch(`${url}/self-hosted/deploying`);
    expect(page.status).to.equal(200);
    expect(await page.text()).to.include('Deploying');
  });
});
