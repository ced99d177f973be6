import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import ssh2 from 'ssh2';
import { DEVICE_PASSWORD } from '../integration/ssh/gateway-world';
import type { AgentProcess } from '../support/agent-process';
import { ServerProcess } from '../support/process-server';

interface Attempt {
  outcome: 'ready' | 'refused' | 'closed' | 'error';
  banner: string;
}

/** One sign-in attempt with ssh2's client: any user name bytes (OpenSSH cannot send a NUL), one password. */
function attempt(port: number, username: string, password = DEVICE_PASSWORD): Promise<Attempt> {
  return new Promise((resolve) => {
    const client = new ssh2.Client();
    let banner = '';
    let done = false;
    const finish = (outcome: Attempt['outcome']) => {
      if (done) return;
      done = true;
      client.end();
      resolve({ outcome, banner });
    };
    client.on('banner', (text: string) => {
      banner += text;
    });
    client.on('ready', () => finish('ready'));
    client.on('error', (err: Error & { level?: string }) =>
      finish(err.level === 'client-authentication' ? 'refused' : 'error'),
    );
    client.on('close', () => finish('closed'));
    client.connect({ host: '127.0.0.1', port, username, password, readyTimeout: 20_000 });
  });
}

/**
 * One unauthenticated SSH attempt must never end the server. Input the store refuses (a NUL
 * byte, a name longer than a column) and a store that is gone were rejected promises nobody caught, and Node
 * exited with API, gateway and tunnels. These run a real `gatehouse serve` process, so an exit is seen as one.
 */
describe('security: an SSH attempt never ends the server', function () {
  this.timeout(180_000);
  let server: ServerProcess;
  let agent: AgentProcess;
  let namespace: string;
  let keyDir: string;

  const healthy = async () => {
    expect(server.alive, `server exited:\n${server.lines.slice(-15).join('\n')}`).to.equal(true);
    const res = await server.api('GET', '/healthz');
    expect(res.status).to.equal(200);
  };
  /** A real sign-in through the gateway to the real agent still works. */
  const reachable = async () => {
    const ok = await attempt(server.sshPort, `root@${namespace}.sturdy`);
    expect(ok.outcome, ok.banner).to.equal('ready');
  };

  before(async () => {
    server = await ServerProcess.start();
    const owner = await server.setup();
    const ns = await server.api('GET', `/api/namespaces/${owner.tenant}`, { token: owner.token });
    namespace = ns.body.name;
    keyDir = mkdtempSync(path.join(tmpdir(), 'gatehouse-admission-'));
    ({ agent } = await server.acceptedAgent(owner, 'sturdy', '02:00:00:00:11:01', keyDir));
    await reachable();
  });
  after(async () => {
    await agent?.stop();
    await server?.stop();
    if (keyDir) rmSync(keyDir, { recursive: true, force: true });
  });

  it('refuses a NUL byte anywhere in the user name with a message, and keeps serving', async () => {
    for (const name of [
      `ro\0ot@${namespace}.sturdy`,
      `root@${namespace}\0.sturdy`,
      `root@${namespace}.stu\0rdy`,
    ]) {
      const res = await attempt(server.sshPort, name);
      expect(res.outcome, JSON.stringify(name)).to.not.equal('ready');
      expect(res.banner).to.contain('is not a device address');
      await healthy();
    }
    await reachable();
  });

  it('refuses over-long names aimed at an existing device before any query, and keeps serving', async () => {
    for (const name of [
      `${'a'.repeat(300)}@${namespace}.sturdy`,
      `root@${namespace}.${'s'.repeat(300)}`,
      `root@${'n'.repeat(300)}.sturdy`,
      `root@${'f'.repeat(300)}`,
    ]) {
      const res = await attempt(server.sshPort, name);
      expect(res.outcome).to.not.equal('ready');
      expect(res.banner).to.contain('is not a device address');
      await healthy();
    }
    await reachable();
  });

  it('echoes no terminal escape sequence of a refused user name', async () => {
    // Clear the screen, retitle the window, and an 8-bit CSI: none may reach the terminal that prints the refusal.
    const name = `root\u001b[2J\u001b]0;owned\u0007\u009b31m@${namespace}`;
    const res = await attempt(server.sshPort, name);
    expect(res.banner).to.contain('is not a device address');
    for (const control of ['\u001b', '\u0007', '\u009b']) expect(res.banner).to.not.contain(control);
    expect(res.banner).to.contain('root?[2J?]0;owned??31m');
    await healthy();
  });

  it('answers an attempt while the store is unreachable with a message, and recovers with the store', async function () {
    const base = process.env.TEST_DATABASE_URL;
    // Without TEST_DATABASE_URL the store is PGlite inside the process and cannot be taken away from it.
    if (!server.databaseUrl || !base) return this.skip();
    const dbName = new URL(server.databaseUrl).pathname.slice(1);
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    try {
      await admin.query(`alter database ${dbName} allow_connections false`);
      await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [
        dbName,
      ]);
      const res = await attempt(server.sshPort, `root@${namespace}.sturdy`);
      expect(res.outcome).to.not.equal('ready');
      expect(res.banner).to.contain('could not complete the sign-in');
      // A second connection meanwhile is answered too, and so is HTTP.
      const again = await attempt(server.sshPort, `root@${namespace}.sturdy`);
      expect(again.banner).to.contain('could not complete the sign-in');
      await healthy();
    } finally {
      await admin.query(`alter database ${dbName} allow_connections true`);
      await admin.end();
    }
    // The store is back: sign-ins work again without a restart.
    for (let i = 0; i < 50; i++) {
      const res = await attempt(server.sshPort, `root@${namespace}.sturdy`);
      if (res.outcome === 'ready') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    await reachable();
  });

  it('logs what failed, and no unhandled rejection was ever logged', () => {
    expect(server.alive, `server exited:\n${server.lines.slice(-15).join('\n')}`).to.equal(true);
    expect(server.logged('gateway sign-in failed').length).to.be.greaterThan(0);
    // What the process guards log for an unhandled rejection or an uncaught exception (core/process-guards.ts).
    expect(server.logged('BUG: ')).to.deep.equal([]);
  });
});
