import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { AgentProcess } from '../../support/agent-process';
import { GatehouseServer } from './gatehouse-server';

/**
 * The agent with an install key (GATEHOUSE_INSTALL_KEY, or --install-key) against the real server, in a namespace
 * that requires one: without it the agent says why it is refused; with it the device registers, is accepted and
 * comes online; and revoking the key stops new devices, not the device it registered.
 */
describe('gatehouse-agent with an install key', function () {
  this.timeout(90_000);
  let server: GatehouseServer;
  let dir: string;
  const agents: AgentProcess[] = [];
  let key = '';
  let keyId = '';

  const startAgent = (identity: string, extra: Record<string, string> = {}, args: string[] = []) => {
    const agent = new AgentProcess(
      {
        GATEHOUSE_SERVER_ADDRESS: server.url,
        GATEHOUSE_TENANT_ID: server.tenantId,
        GATEHOUSE_PRIVATE_KEY: join(dir, `${identity}.key`),
        GATEHOUSE_PREFERRED_IDENTITY: identity,
        GATEHOUSE_PREFERRED_HOSTNAME: identity,
        GATEHOUSE_KEEPALIVE_INTERVAL: '1',
        GATEHOUSE_SINGLE_USER_PASSWORD: 'correct horse',
        ...extra,
      },
      args,
    );
    agents.push(agent);
    return agent;
  };

  before(async () => {
    server = await GatehouseServer.start();
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-agent-key-'));
    const required = await server.api('PUT', `/api/namespaces/${server.tenantId}`, {
      settings: { require_install_key: true },
    });
    expect(required.status, JSON.stringify(required.body)).to.equal(200);
    expect(required.body.settings.require_install_key).to.equal(true);
    const created = await server.api('POST', '/api/namespaces/install-keys', { name: 'lab-rollout' });
    expect(created.status, JSON.stringify(created.body)).to.equal(200);
    key = created.body.key;
    keyId = created.body.id;
  });
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((agent) => agent.stop()));
  });
  after(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is refused with the reason when it has no key, and the device is not registered', async () => {
    const agent = startAgent('no-key');
    await agent.waitFor(/without an install key/);
    const refused = await agent.waitFor(/refused the registration \(403\)/);
    expect(refused).to.match(/registers new devices only with an install key: set GATEHOUSE_INSTALL_KEY/);
    const pending = await server.api('GET', '/api/devices?status=pending');
    expect(pending.body).to.deep.equal([]);
  });

  it('registers with GATEHOUSE_INSTALL_KEY, is accepted and comes online; the key never shows in its log', async () => {
    const agent = startAgent('with-key', { GATEHOUSE_INSTALL_KEY: key });
    await agent.waitFor(/with an install key/);
    await agent.waitFor(/pending acceptance/);
    const uid = await agent.uid();
    expect(server.authCalls.some((call) => call.install_key === key)).to.equal(true);
    expect((await server.device(uid)).status).to.equal('pending');
    await server.setStatus(uid, 'accept');
    await agent.waitFor(/online: device with-key/);
    await server.waitOnline(uid);
    const listed = await server.api('GET', '/api/namespaces/install-keys');
    expect(listed.body[0]).to.include({ name: 'lab-rollout', used_times: 1 });
    expect(agent.lines.join('\n')).to.not.include(key.slice(4));

    // Revoked: the device it registered keeps its availability calls and its tunnel.
    expect((await server.api('DELETE', `/api/namespaces/install-keys/${keyId}`)).status).to.equal(200);
    const calls = server.authCalls.length;
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(server.authCalls.length).to.be.at.least(calls + 1);
    expect((await server.device(uid)).online).to.equal(true);
  });

  it('takes the key as --install-key, and a revoked key is refused with its reason', async () => {
    const agent = startAgent('revoked-key', {}, ['--install-key', key]);
    const refused = await agent.waitFor(/refused the registration \(403\)/);
    expect(refused).to.match(/install key is not valid for this namespace/);
    expect(agent.lines.join('\n')).to.not.include(key.slice(4));
  });

  it('stops with a message naming GATEHOUSE_INSTALL_KEY when the key has spaces, without echoing it', async () => {
    const agent = startAgent('bad-key', { GATEHOUSE_INSTALL_KEY: 'gik_secret part' });
    expect(await agent.exited).to.equal(2);
    const log = agent.lines.join('\n');
    expect(log).to.match(/GATEHOUSE_INSTALL_KEY \(--install-key\) must be up to 128 printable characters/);
    expect(log).to.not.include('secret part');
  });
});
