import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { clientOptions, passwordOptions } from '../../support/openssh';
import { type AcceptedAgent, ServerProcess } from '../../support/process-server';
import { type LoginAnswer, startServer } from '../../support/server';
import { DEVICE_PASSWORD, GatewayWorld } from './gateway-world';

interface SessionAnswer {
  uid: string;
  authenticated: boolean;
  active: boolean;
}

/** `ssh ... sleep 300` through the gateway, left running. */
function longSession(port: number, target: string, knownHosts: string): ChildProcess {
  return spawn(
    'sshpass',
    [
      '-p',
      DEVICE_PASSWORD,
      'ssh',
      ...clientOptions({ knownHosts }),
      ...passwordOptions(),
      '-p',
      String(port),
      `${target}@127.0.0.1`,
      'sleep 300',
    ],
    { stdio: 'ignore' },
  );
}

async function eventually<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const found = await probe();
    if (found !== undefined) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} never happened`);
}

/**
 * A server that crashed once left its sessions active for minutes (until no heartbeat had vouched for them in
 * five). The server that starts again closes them at once, and no instance closes another live one's.
 */
describe('ssh sessions of a server that crashed', function () {
  this.timeout(180_000);

  describe('one server, killed and started again', () => {
    let server: ServerProcess;
    let owner: LoginAnswer;
    let device: AcceptedAgent;
    let dir: string;
    let ssh: ChildProcess | undefined;
    before(async () => {
      server = await ServerProcess.start();
      owner = await server.setup();
      dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-sweep-'));
      device = await server.acceptedAgent(owner, 'survivor', '02:00:00:00:12:01', dir);
    });
    after(async () => {
      ssh?.kill('SIGKILL');
      await device?.agent.stop();
      await server?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('closes the sessions it carried as soon as it is back', async () => {
      const ns = await server.api('GET', `/api/namespaces/${owner.tenant}`, { token: owner.token });
      ssh = longSession(server.sshPort, `root@${ns.body.name}.survivor`, path.join(dir, 'known_hosts'));
      const live = await eventually('an active session', async () => {
        const list = await server.api('GET', '/api/sessions', { token: owner.token });
        return (list.body as SessionAnswer[]).find((s) => s.authenticated && s.active);
      });

      await server.kill('SIGKILL');
      await server.spawn();
      // As soon as it answers, the session it carried before the crash is closed.
      const after = await server.api('GET', `/api/sessions/${live.uid}`, { token: owner.token });
      expect(after.status).to.equal(200);
      expect(after.body.active).to.equal(false);
      expect(server.logged('closed sessions left open by a gateway that is gone').length).to.equal(1);
    });
  });

  describe('two instances sharing the store (pending without TEST_DATABASE_URL and TEST_REDIS_URL)', () => {
    const shared = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);
    let world: GatewayWorld;
    before(async function () {
      if (!shared) return this.skip();
      world = await GatewayWorld.start({ deviceName: 'steady' });
    });
    after(async () => {
      await world?.stop();
    });

    it('never closes a session another live instance carries when one starts', async () => {
      const ssh = longSession(world.server.sshPort, world.target(), path.join(world.dir, 'known_hosts'));
      try {
        const live = await eventually('an active session', async () => {
          const list = await world.api('GET', '/api/sessions');
          return (list.body as SessionAnswer[]).find((s) => s.authenticated && s.active);
        });
        const other = await startServer({ sharing: world.server });
        try {
          const seen = await other.api('GET', `/api/sessions/${live.uid}`, { token: world.owner.token });
          expect(seen.body.active).to.equal(true);
        } finally {
          await other.stop();
        }
        expect((await world.api('GET', `/api/sessions/${live.uid}`)).body.active).to.equal(true);
      } finally {
        ssh.kill('SIGKILL');
      }
    });
  });
});
