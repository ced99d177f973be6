// Runs the commands that the getting-started and installing pages mark with `run`, so
// the docs never tell a newcomer something that does not work. `run` blocks must finish
// with exit status 0; `run=background` blocks start something that keeps running (the
// server) and must become ready.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect } from 'chai';
import { docsDir } from './docs-site';

const repoDir = resolve(docsDir, '..');
const pages = ['content/overview/getting-started/index.md', 'content/developers/agent/installing.md'];

interface RunBlock {
  page: string;
  mode: 'run' | 'background';
  command: string;
}

function runBlocks(page: string): RunBlock[] {
  const text = readFileSync(join(docsDir, page), 'utf8');
  return [...text.matchAll(/^```(?:bash|sh)\s+(run(?:=background)?)\s*\n([\s\S]*?)^```/gm)].map((match) => ({
    page,
    mode: match[1] === 'run=background' ? 'background' : 'run',
    command: (match[2] ?? '').trim(),
  }));
}

/** A process and all its descendants, parents first. */
function processTree(pid: number): number[] {
  let children: number[] = [];
  try {
    children = execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    // pgrep exits 1 when there are no children
  }
  return [pid, ...children.flatMap(processTree)];
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once('error', fail);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => done(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

describe('commands in the getting-started and installing pages', function () {
  this.timeout(120_000);
  const blocks = pages.flatMap(runBlocks);
  const byCommand = (text: string) => blocks.find((block) => block.command.includes(text));
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let server: ChildProcess | undefined;
  let serverOutput = '';

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-docs-'));
    const [httpPort, sshPort] = [await freePort(), await freePort()];
    env = {
      ...process.env,
      GATEHOUSE_HTTP_PORT: String(httpPort),
      GATEHOUSE_SSH_PORT: String(sshPort),
      GATEHOUSE_DATA_DIR: dataDir,
      GATEHOUSE_DATABASE_URL: '',
      GATEHOUSE_REDIS_URL: '',
      GATEHOUSE_PUBLIC_URL: `http://127.0.0.1:${httpPort}`,
    };
  });

  after(async () => {
    // npm neither passes signals on nor keeps the server in its process group, so stop
    // every process below it, deepest first.
    if (server?.pid) {
      for (const pid of processTree(server.pid).reverse()) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('marks the install, start and setup-link commands as runnable', () => {
    expect(byCommand('cd gatehouse && npm install')?.mode).to.equal('run');
    // No placeholder address to replace: the page says where the code comes from in words.
    expect(blocks.filter((block) => /<repo>|git clone/.test(block.command))).to.deep.equal([]);
    expect(byCommand('npm start')?.mode).to.equal('background');
    expect(byCommand('npx gatehouse setup-url')?.mode).to.equal('run');
    expect(blocks.filter((block) => block.page.endsWith('installing.md')).length).to.be.greaterThan(0);
  });

  // A full `npm install` of a fresh clone takes minutes on two cores, too long for every
  // run, so it is opt-in; when skipped, the title mocha prints says why and how to run it.
  const runInstall = process.env.GATEHOUSE_DOCS_RUN_INSTALL === '1';
  const installTitle = 'installs a copy of the source with the documented command';
  (runInstall ? it : it.skip)(
    runInstall
      ? installTitle
      : `${installTitle} [skipped: a fresh npm install takes minutes on two cores; set GATEHOUSE_DOCS_RUN_INSTALL=1 to run it]`,
    function () {
      this.timeout(900_000);
      const work = mkdtempSync(join(tmpdir(), 'gatehouse-clone-'));
      try {
        // The copy of the source the page asks for, in the folder it names.
        execFileSync('git', ['clone', '--quiet', repoDir, 'gatehouse'], { cwd: work, stdio: 'inherit' });
        const command = byCommand('cd gatehouse && npm install')?.command ?? '';
        execFileSync('bash', ['-ec', command], { cwd: work, stdio: 'inherit', timeout: 900_000 });
        const manifest = JSON.parse(readFileSync(join(work, 'gatehouse', 'package.json'), 'utf8')) as {
          scripts: Record<string, string>;
        };
        expect(manifest.scripts.start).to.be.a('string');
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    },
  );

  it('starts the server with the documented command and prints a setup link', async () => {
    const command = byCommand('npm start')?.command ?? '';
    server = spawn('bash', ['-c', `exec ${command}`], {
      cwd: repoDir,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server.stdout?.on('data', (chunk: Buffer) => {
      serverOutput += chunk.toString();
    });
    server.stderr?.on('data', (chunk: Buffer) => {
      serverOutput += chunk.toString();
    });
    const deadline = Date.now() + 90_000;
    let info: { setup?: boolean } | undefined;
    while (Date.now() < deadline && server.exitCode === null) {
      try {
        const answer = await fetch(`${env.GATEHOUSE_PUBLIC_URL}/info`);
        if (answer.ok) {
          info = (await answer.json()) as { setup?: boolean };
          break;
        }
      } catch {
        // not listening yet
      }
      await new Promise((done) => setTimeout(done, 250));
    }
    expect(info, `server did not answer /info; output:\n${serverOutput}`).to.not.equal(undefined);
    expect(serverOutput).to.match(/https?:\/\/\S*setup\S*/i);
  });

  it("prints the setup link again with the documented command, running the checkout's own CLI", () => {
    const command = byCommand('npx gatehouse setup-url')?.command ?? '';
    // npx runs the workspace's linked bin; were there none, it would install the checkout into its cache, whose
    // `prepare` rebuilds the console and the agent (and takes the agent's executable away while the server serves it).
    const built = [
      join(repoDir, 'web', 'dist', 'index.html'),
      join(repoDir, 'agent', 'dist', 'gatehouse-agent'),
    ];
    const before = built.map((file) => statSync(file).mtimeMs);
    const output = execFileSync('bash', ['-ec', command], {
      cwd: repoDir,
      env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(output).to.match(/https?:\/\/\S*setup\S*/i);
    expect(built.map((file) => statSync(file).mtimeMs)).to.deep.equal(before);
  });
});
