import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { type PodmanEngine, startPodman } from '../../support/podman';
import { type LoginAnswer, startServer, type TestServer } from '../../support/server';
import { docsDir } from './docs-site';

const run = promisify(execFile);
const page = join(docsDir, 'content', 'user-guides', 'devices', 'containers.md');

/** The `curl` blocks of the containers page, in order (the engine's and the ssh blocks are not curl calls). */
function curlBlocks(): string[] {
  const text = readFileSync(page, 'utf8');
  return [...text.matchAll(/^```bash\n([\s\S]*?)^```/gm)]
    .map((m) => (m[1] ?? '').trim())
    .filter((block) => block.startsWith('curl '));
}

/**
 * The containers page's connector commands, run as written (with `curl -f`, so an error answer fails them) against an
 * enterprise server and a real engine (podman's Docker-compatible API): a reader who follows the page adds a
 * connector that connects, sees it listed with the engine's information, sees a started container as a pending
 * device, and deletes the connector.
 */
describe('docs: the commands of the containers page (podman)', function () {
  this.timeout(120_000);
  let engine: PodmanEngine;
  let server: TestServer;
  let me: LoginAnswer;

  /**
   * Runs one block of the page as a reader would, with the variables the page tells them to set; `curl` also prints
   * each answer's status on a line of its own, so answers are read as `{ status, body }` in order.
   */
  const runBlock = async (block: string, env: Record<string, string>) => {
    const script = `curl() { command curl -w '\\n%{http_code}\\n' "$@"; }\n${block.replaceAll('https://gatehouse.example.com', server.url)}`;
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], {
      env: {
        ...process.env,
        TOKEN: me.token,
        ENGINE_ADDRESS: engine.address,
        ENGINE_PORT: String(engine.port),
        ...env,
      },
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
  });
  after(async () => {
    await server?.stop();
    await engine?.close();
  });

  it('finds the commands on the page', () => {
    const blocks = curlBlocks();
    expect(blocks).to.have.length(4);
    expect(blocks[0]).to.contain('-X POST https://gatehouse.example.com/api/connector ');
    expect(blocks[1]).to.contain('/api/connector/$CONNECTOR/info');
    expect(blocks[2]).to.contain('/api/containers');
    expect(blocks[3]).to.contain('-X DELETE https://gatehouse.example.com/api/connector/$CONNECTOR');
  });

  it('runs each block in order, every call answering with success', async () => {
    const [create, listAndInfo, containers, remove] = curlBlocks() as [string, string, string, string];

    const [made] = await runBlock(create, {});
    // 200, not 201: the engine answered.
    expect(made?.status, JSON.stringify(made?.body)).to.equal(200);
    expect(made?.body).to.include({
      address: engine.address,
      port: engine.port,
      secure: false,
      enable: true,
    });
    expect(made?.body.status.State).to.equal('connected');
    const connector: string = made?.body.uid;

    const [list, info] = await runBlock(listAndInfo, { CONNECTOR: connector });
    expect(list?.status).to.equal(200);
    expect(list?.body.map((c: { uid: string }) => c.uid)).to.deep.equal([connector]);
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
