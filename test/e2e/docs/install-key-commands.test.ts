import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { agentAuthRequest } from '../../support/device-keys';
import { type LoginAnswer, startServer, type TestServer } from '../../support/server';
import { docsDir } from './docs-site';

const run = promisify(execFile);
const page = join(docsDir, 'content', 'user-guides', 'devices', 'adding.md');

/** The bash blocks of the adding page, in order. */
function blocks(): string[] {
  const text = readFileSync(page, 'utf8');
  return [...text.matchAll(/^```bash\n([\s\S]*?)^```/gm)].map((m) => (m[1] ?? '').trim());
}
const apiBlocks = () => blocks().filter((b) => b.startsWith('curl ') && b.includes('/api/namespaces'));

/**
 * The install key commands of "Adding a device", run as written (with `curl -f`, so an error answer fails them)
 * against a real server: a reader makes a key, requires keys in the namespace, sees a device without one refused
 * and one with it registered, lists, rotates and revokes the key. The page's one-line install with a key is the
 * console's, and installs an agent whose settings keep the key.
 */
describe('docs: the install key commands of the adding page', function () {
  this.timeout(120_000);
  let server: TestServer;
  let me: LoginAnswer;
  let scratch: string;

  /** Runs one block as a reader would; `curl` prints each answer's status on a line of its own. */
  const runBlock = async (block: string, env: Record<string, string>) => {
    const script = `curl() { command curl -fsS -w '\\n%{http_code}\\n' "$@"; }\n${block.replaceAll('https://gatehouse.example.com', server.url)}`;
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], {
      env: { ...process.env, TOKEN: me.token, TENANT: me.tenant, ...env },
    });
    const lines = stdout.trim().split('\n');
    const answers: { status: number; body: any }[] = [];
    for (let i = 0; i + 1 < lines.length; i += 2) {
      answers.push({ status: Number(lines[i + 1]), body: JSON.parse(lines[i] as string) });
    }
    return answers;
  };
  const register = (label: string, installKey?: string) => {
    const req = agentAuthRequest({
      tenant: me.tenant,
      hostname: label,
      mac: `02:00:00:00:d0:${label.length}`,
      keyLabel: label,
    });
    return server.api('POST', '/api/devices/auth', {
      body: installKey ? { ...req.body, install_key: installKey } : req.body,
      headers: req.headers,
    });
  };

  before(async () => {
    server = await startServer({ ssh: false });
    me = await server.setup();
    scratch = mkdtempSync(join(tmpdir(), 'gatehouse-docs-keys-'));
  });
  after(async () => {
    await server?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('finds the commands on the page', () => {
    const api = apiBlocks();
    expect(api).to.have.length(3);
    expect(api[0]).to.contain('-X POST https://gatehouse.example.com/api/namespaces/install-keys ');
    expect(api[1]).to.contain('require_install_key');
    expect(api[2]).to.contain('/api/namespaces/install-keys/$KEY_ID/rotate');
  });

  it('runs each block in order: a key is made, required, used, listed, rotated and revoked', async () => {
    const [create, require, manage] = apiBlocks() as [string, string, string];
    const [made] = await runBlock(create, {});
    expect(made?.status).to.equal(200);
    expect(made?.body).to.include({ name: 'site-42', usage_limit: 20, used_times: 0 });
    expect(made?.body.key).to.match(/^gik_/);
    const days = (Date.parse(made?.body.expires_at) - Date.now()) / 86_400_000;
    expect(days).to.be.within(6.9, 7.01);

    const [required] = await runBlock(require, {});
    expect(required?.status).to.equal(200);
    expect(required?.body.settings.require_install_key).to.equal(true);
    expect((await register('tenant-only')).status).to.equal(403);
    expect((await register('with-key', made?.body.key)).status).to.equal(200);

    const [list, rotated, revoked] = await runBlock(manage, { KEY_ID: made?.body.id });
    expect(list?.status).to.equal(200);
    expect(list?.body).to.have.length(1);
    expect(list?.body[0]).to.include({ id: made?.body.id, used_times: 1 });
    expect(list?.body[0]).to.not.have.property('key');
    expect(rotated?.status).to.equal(200);
    expect(rotated?.body.key).to.match(/^gik_/).and.not.equal(made?.body.key);
    expect(revoked?.status).to.equal(200);
    expect((await register('after-revoke', rotated?.body.key)).status).to.equal(403);
  });

  it("gives the console's one-line install with a key, and it keeps the key in the agent's settings", async () => {
    const oneLine = blocks().find(
      (b) => b.includes('/agent/install.sh') && b.includes('GATEHOUSE_INSTALL_KEY'),
    );
    // The console's command (plugins/community/web/devices/install.tsx) with the page's placeholders.
    expect(oneLine).to.equal(
      'curl -fsSL "$SERVER/agent/install.sh" | GATEHOUSE_SERVER_ADDRESS="$SERVER" GATEHOUSE_TENANT_ID=<tenant-id> GATEHOUSE_INSTALL_KEY=<install-key> sh',
    );
    const key = `gik_0123456789ab_${'c'.repeat(40)}`;
    const root = join(scratch, 'root');
    const command = (oneLine as string)
      .replace('<tenant-id>', me.tenant)
      .replace('<install-key>', key)
      .replace(
        '| GATEHOUSE_SERVER_ADDRESS',
        `| GATEHOUSE_INSTALL_ROOT=${root} GATEHOUSE_NO_SYSTEMD=1 GATEHOUSE_SERVER_ADDRESS`,
      );
    await run('sh', ['-c', command], { env: { ...process.env, SERVER: server.url } });
    const settings = readFileSync(join(root, 'etc/default/gatehouse-agent'), 'utf8');
    expect(settings).to.contain(`GATEHOUSE_TENANT_ID=${me.tenant}\nGATEHOUSE_PRIVATE_KEY=`);
    expect(settings).to.contain(`GATEHOUSE_INSTALL_KEY=${key}\n`);
  });
});
