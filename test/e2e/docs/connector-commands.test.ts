import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { type PodmanEngine, startPodman } from '../../support/podman';
import { type LoginAnswer, startServer, type TestServer } from '../../support/server';
import { docsDir } from './docs-site';

const run = promisify(execFile);
const page = join(docsDir, 'content', 'user-guides', 'devices', 'containers.md');

/** The shell blocks of the containers page, in order. */
function blocks(): string[] {
  const text = readFileSync(page, 'utf8');
  return [...text.matchAll(/^```bash\n([\s\S]*?)^```/gm)].map((m) => (m[1] ?? '').trim());
}

/**
 * The containers page's connector commands, run as written against an enterprise server and a real engine
 * (podman's Docker-compatible API): `curl` with `-f`, so an error answer fails them; the agent fetched from the
 * server as the page says, into a folder of the test's instead of /opt (and without sudo); the connector started
 * with the page's command. A reader who follows the page adds a connector, runs it beside the engine, sees it
 * connected with the engine's information, sees a started container as a pending device, and deletes it.
 */
describe('docs: the commands of the containers page (podman)', function () {
  this.timeout(120_000);
  let engine: PodmanEngine;
  let server: TestServer;
  let me: LoginAnswer;
  let opt: string;
  let connectorProcess: ChildProcess | undefined;

  /** A block as the reader runs it: the server's address for the example's, the test's folder for /opt. */
  const asWritten = (block: string) =>
    block
      .replaceAll('https://gatehouse.example.com', server.url)
      .replaceAll(' /opt', ` ${opt}`)
      .replace(/\bsudo /g, '');

  /**
   * Runs one block of the page as a reader would, with the variables the page tells them to set; `curl` also prints
   * each answer's status on a line of its own, so answers are read as `{ status, body }` in order.
   */
  const runBlock = async (block: string, env: Record<string, string>) => {
    const script = `curl() { command curl -w '\\n%{http_code}\\n' "$@"; }\n${asWritten(block)}`;
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], {
      env: { ...process.env, TOKEN: me.token, ...env },
    });
    const lines = stdout.trim().split('\n');
    const answers: { status: number; body: any }[] = [];
    for (let i = 0; i + 1 < lines.length; i += 2) {
      answers.push({ status: Number(lines[i + 1]), body: JSON.parse(lines[i] as string) });
    }
    return answers;
  };

  before(async () => {
    engine = await startPodman();
    server = await startServer({ edition: 'enterprise', ssh: false });
    me = await server.setup();
    opt = mkdtempSync(join(tmpdir(), 'gatehouse-docs-opt-'));
  });
  after(async () => {
    if (connectorProcess?.pid) process.kill(-connectorProcess.pid, 'SIGTERM');
    await server?.stop();
    await engine?.close();
    if (opt) rmSync(opt, { recursive: true, force: true });
  });

  it('finds the commands on the page', () => {
    const all = blocks();
    expect(all).to.have.length(7);
    expect(all[0]).to.contain('-X POST https://gatehouse.example.com/api/connector ');
    expect(all[1]).to.contain('/agent/gatehouse-agent-linux-');
    expect(all[2]).to.contain('/opt/gatehouse-agent/gatehouse-agent connector');
    expect(all[3]).to.contain('/api/connector/$CONNECTOR/info');
    expect(all[4]).to.contain('/api/containers');
    expect(all[5]).to.contain('-X DELETE https://gatehouse.example.com/api/connector/$CONNECTOR');
    expect(all[6]).to.match(/^ssh /);
  });

  it('runs each block in order, every call answering with success', async () => {
    const [create, fetchAgent, start, listAndInfo, containers, remove] = blocks() as string[] as [
      string,
      string,
      string,
      string,
      string,
      string,
    ];

    const [made] = await runBlock(create, {});
    expect(made?.status, JSON.stringify(made?.body)).to.equal(201);
    expect(made?.body).to.include({ address: '', port: 0, secure: false, enable: true });
    const connector: string = made?.body.uid;
    const token: string = made?.body.token;

    await run('bash', ['-euo', 'pipefail', '-c', asWritten(fetchAgent)]);
    // The page's command, with the engine this test runs (the page's default is the Docker socket).
    connectorProcess = spawn('bash', ['-euo', 'pipefail', '-c', asWritten(start)], {
      // Its own process group, so that stopping it stops the connector bash started.
      detached: true,
      env: {
        ...process.env,
        CONNECTOR_TOKEN: token,
        GATEHOUSE_CONNECTOR_ENGINE: `tcp://${engine.address}:${engine.port}`,
        // The executable unpacks its runtime beside the device key of a root install; the test's own folder here.
        GATEHOUSE_AGENT_RUNTIME_DIR: join(opt, 'runtime'),
      },
      stdio: 'ignore',
    });
    const deadline0 = Date.now() + 20_000;
    for (;;) {
      const res = await server.api('GET', `/api/connector/${connector}`, { token: me.token });
      if (res.body.status.State === 'connected') break;
      if (Date.now() > deadline0) throw new Error(`never connected: ${JSON.stringify(res.body)}`);
      await new Promise((r) => setTimeout(r, 200));
    }

    const [list, info] = await runBlock(listAndInfo, { CONNECTOR: connector });
    expect(list?.status).to.equal(200);
    expect(list?.body.map((c: { uid: string }) => c.uid)).to.deep.equal([connector]);
    expect(list?.body[0]).to.include({ address: engine.address, port: engine.port });
    // The engine's own /info object, as podman answers it directly.
    expect(info?.status).to.equal(200);
    const direct = (await (await fetch(`http://${engine.address}:${engine.port}/info`)).json()) as {
      Name: string;
      ServerVersion: string;
    };
    expect(info?.body).to.include({ Name: direct.Name, ServerVersion: direct.ServerVersion });

    await engine.runContainer('docs-web');
    const deadline = Date.now() + 20_000;
    let names: string[] = [];
    while (!names.includes('docs-web')) {
      if (Date.now() > deadline) throw new Error(`docs-web never listed: ${JSON.stringify(names)}`);
      await new Promise((r) => setTimeout(r, 200));
      const [answer] = await runBlock(containers, {});
      expect(answer?.status).to.equal(200);
      names = answer?.body.map((c: { name: string }) => c.name);
    }

    const [removed] = await runBlock(remove, { CONNECTOR: connector });
    expect(removed?.status).to.equal(200);
    const gone = await server.api('GET', `/api/connector/${connector}`, { token: me.token });
    expect(gone.status).to.equal(404);
  });
});
