import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer, type Server } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { loadOrCreateDeviceKey } from '../../../agent/identity';
import { AgentSshServer } from '../../../agent/ssh-server/server';
import { passwordOptions } from '../../support/openssh';
import { baseSshOptions, runWithPassword } from './openssh-client';

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/**
 * The agent's own SFTP server, for devices without OpenSSH's sftp-server, driven by the
 * real sftp client. The SSH server is fed plain TCP connections here: the tunnel under it
 * is covered by the other suites.
 */
describe('built-in SFTP server with the OpenSSH sftp client', function () {
  this.timeout(60_000);
  let dir: string;
  let listener: Server;
  let ssh: AgentSshServer;
  let port: number;
  const sftp = (commands: string) =>
    runWithPassword(
      'builtin pw',
      'sftp',
      [
        ...baseSshOptions(port).map((a) => (a === '-p' ? '-P' : a)),
        ...passwordOptions(),
        `${userInfo().username}@127.0.0.1`,
      ],
      { input: commands, timeoutMs: 40_000 },
    );

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-sftp-'));
    const { key } = await loadOrCreateDeviceKey(join(dir, 'host.key'));
    ssh = new AgentSshServer({
      hostKey: key.privateKey,
      singleUserPassword: 'builtin pw',
      sftpServer: 'builtin',
      log: () => {},
    });
    listener = createServer((socket) => {
      socket.setNoDelay(true);
      ssh.handleStream(socket);
    });
    listener.listen(0, '127.0.0.1');
    await once(listener, 'listening');
    port = (listener.address() as AddressInfo).port;
  });
  after(() => {
    ssh.close();
    listener.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('uploads and downloads a multi-megabyte file intact', async () => {
    const data = randomBytes(3 * 1024 * 1024 + 7);
    writeFileSync(join(dir, 'up.bin'), data);
    const result = await sftp(
      `put ${join(dir, 'up.bin')} ${join(dir, 'remote.bin')}\nget ${join(dir, 'remote.bin')} ${join(dir, 'down.bin')}\n`,
    );
    expect(result.code, result.stderr).to.equal(0);
    expect(sha256(readFileSync(join(dir, 'remote.bin')))).to.equal(sha256(data));
    expect(sha256(readFileSync(join(dir, 'down.bin')))).to.equal(sha256(data));
  });

  it('lists, makes and removes directories, renames, changes modes', async () => {
    mkdirSync(join(dir, 'tree'));
    writeFileSync(join(dir, 'tree', 'a.txt'), 'alpha');
    const result = await sftp(
      [
        `cd ${join(dir, 'tree')}`,
        'ls -l',
        'mkdir sub',
        'rename a.txt sub/b.txt',
        'chmod 600 sub/b.txt',
        'ls sub',
        'mkdir gone',
        'rmdir gone',
        '',
      ].join('\n'),
    );
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.match(/-rw-r--r-- +1 .* 5 .* a\.txt/);
    expect(result.stdout).to.match(/b\.txt/);
    expect(existsSync(join(dir, 'tree', 'gone'))).to.equal(false);
    expect(readFileSync(join(dir, 'tree', 'sub', 'b.txt'), 'utf8')).to.equal('alpha');
    expect(statSync(join(dir, 'tree', 'sub', 'b.txt')).mode & 0o777).to.equal(0o600);
  });

  it('reports a missing file as such', async () => {
    const result = await sftp(`get ${join(dir, 'no-such-file')} ${join(dir, 'x')}\n`);
    expect(result.stderr).to.match(/No such file|not found/i);
    expect(existsSync(join(dir, 'x'))).to.equal(false);
  });
});
