import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer, type Server } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { loadOrCreateDeviceKey } from '../../../agent/identity';
import { AgentSshServer } from '../../../agent/ssh-server/server';
import { passwordOptions } from '../../support/openssh';
import { baseSshOptions, runWithPassword } from './openssh-client';

/**
 * GATEHOUSE_SINGLE_USER_PASSWORD may hold a crypt(3) hash instead of the password, so the
 * password itself need not sit in the unit's environment file.
 */
describe('single-user mode with a hashed password', function () {
  this.timeout(60_000);
  let dir: string;
  let listener: Server;
  let ssh: AgentSshServer;
  let port: number;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-single-hash-'));
    const { key } = await loadOrCreateDeviceKey(join(dir, 'host.key'));
    // `mkpasswd -m yescrypt yes-pass`
    ssh = new AgentSshServer({
      hostKey: key.privateKey,
      singleUserPassword: '$y$j9T$su5twMH90lI/PaTO22vzV0$sg8q4s0kZx9kXT3sUJY62gmmfPVcIwFJ7MaPw0Gpst2',
      log: () => {},
    });
    listener = createServer((socket) => ssh.handleStream(socket));
    listener.listen(0, '127.0.0.1');
    await once(listener, 'listening');
    port = (listener.address() as AddressInfo).port;
  });
  after(() => {
    ssh.close();
    listener.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('signs in with the password whose hash is configured, and not with the hash itself', async () => {
    const target = `${userInfo().username}@127.0.0.1`;
    const ok = await runWithPassword('yes-pass', 'ssh', [
      ...baseSshOptions(port),
      ...passwordOptions(),
      target,
      'echo in',
    ]);
    expect(ok.stdout.trim(), ok.stderr).to.equal('in');
    const hash = await runWithPassword(
      '$y$j9T$su5twMH90lI/PaTO22vzV0$sg8q4s0kZx9kXT3sUJY62gmmfPVcIwFJ7MaPw0Gpst2',
      'ssh',
      [...baseSshOptions(port), ...passwordOptions(), target, 'echo in'],
    );
    expect(hash.code).to.equal(255);
    expect(hash.stderr).to.match(/Permission denied/);
  });
});
