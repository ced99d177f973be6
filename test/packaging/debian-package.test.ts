import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { agentDebName } from '../../packaging/release/agent-artifacts';
import { artifact, version } from './release';

/**
 * The agent's Debian package, installed with dpkg into a scratch root (a dpkg database of its own, maintainer scripts
 * run against that root): the executable, the unit systemd accepts, the settings file, and a postinst that starts
 * nothing before the settings name a server.
 */
describe('the agent Debian package', function () {
  this.timeout(120_000);
  const deb = artifact(agentDebName('amd64'));
  let root: string;
  const dpkg = (...args: string[]) =>
    spawnSync('dpkg', [`--root=${root}`, '--force-script-chrootless', '--log=/dev/null', ...args], {
      encoding: 'utf8',
    });

  before(function () {
    if (process.getuid?.() !== 0) this.skip(); // dpkg installs as root, as the docs' `apt install` does
    root = mkdtempSync(path.join(tmpdir(), 'gatehouse-deb-'));
    for (const sub of ['var/lib/dpkg/info', 'var/lib/dpkg/updates', 'var/lib/dpkg/triggers']) {
      mkdirSync(path.join(root, sub), { recursive: true });
    }
    writeFileSync(path.join(root, 'var/lib/dpkg/status'), '');
  });
  after(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('declares what it is and what it needs', () => {
    const field = (name: string) => execFileSync('dpkg-deb', ['-f', deb, name], { encoding: 'utf8' }).trim();
    expect(field('Package')).to.equal('gatehouse-agent');
    expect(field('Version')).to.equal(version);
    expect(field('Architecture')).to.equal('amd64');
    expect(field('Depends')).to.include('libc6');
    expect(field('Depends')).to.not.include('nodejs');
    const files = execFileSync('dpkg-deb', ['-c', deb], { encoding: 'utf8' });
    for (const file of [
      './usr/bin/gatehouse-agent',
      './lib/systemd/system/gatehouse-agent.service',
      './etc/default/gatehouse-agent',
    ]) {
      expect(files).to.include(file);
    }
  });

  it('installs into a scratch root, and postinst says what to configure instead of starting the agent', () => {
    // docs: apt install ./gatehouse-agent_<version>_amd64.deb (dpkg -i does the same with the file)
    const install = dpkg('--force-depends', '-i', deb);
    expect(install.status, install.stderr).to.equal(0);
    expect(install.stdout).to.include(
      'gatehouse-agent: set GATEHOUSE_SERVER_ADDRESS and GATEHOUSE_TENANT_ID in /etc/default/gatehouse-agent,',
    );
    expect(install.stdout).to.include('then start it: systemctl enable --now gatehouse-agent');
    expect(statSync(path.join(root, 'etc/default/gatehouse-agent')).mode & 0o777).to.equal(0o600);
    expect(statSync(path.join(root, 'var/lib/gatehouse-agent')).mode & 0o777).to.equal(0o700);
    const runtime = path.join(root, 'var/lib/gatehouse-agent/runtime');
    expect(
      execFileSync(path.join(root, 'usr/bin/gatehouse-agent'), ['--version'], {
        env: { PATH: '/usr/sbin:/sbin', GATEHOUSE_AGENT_RUNTIME_DIR: runtime },
        encoding: 'utf8',
      }).trim(),
    ).to.equal(version);
  });

  it('ships a unit that systemd-analyze verify accepts, starting the packaged executable', function () {
    if (!existsSync('/usr/bin/systemd-analyze')) this.skip();
    const unit = path.join(root, 'lib/systemd/system/gatehouse-agent.service');
    expect(readFileSync(unit, 'utf8')).to.include('ExecStart=gatehouse-agent\n');
    // The targets the unit names come with systemd on a device: this machine's, in the scratch root.
    const units = path.join(root, 'usr/lib/systemd/system');
    mkdirSync(units, { recursive: true });
    for (const target of readdirSync('/lib/systemd/system').filter((f) => f.endsWith('.target'))) {
      cpSync(path.join('/lib/systemd/system', target), path.join(units, target));
    }
    const verify = spawnSync(
      'systemd-analyze',
      ['verify', `--root=${root}`, '/lib/systemd/system/gatehouse-agent.service'],
      {
        encoding: 'utf8',
      },
    );
    expect(verify.status, verify.stderr).to.equal(0);
    // Not a warning in sight about the unit itself (systemd names the unit's file in each).
    expect(verify.stderr).to.not.include('gatehouse-agent.service:');
  });

  it('on a running systemd, postinst only reloads: it enables and starts nothing until the agent is configured', () => {
    // The postinst on a machine where systemd runs, in a mount namespace of its own: /run/systemd/system exists,
    // /etc/default and /var/lib are the scratch root's, and systemctl records what it is asked.
    const bin = path.join(root, 'fake-bin');
    mkdirSync(bin);
    const calls = path.join(root, 'systemctl-calls');
    writeFileSync(
      path.join(bin, 'systemctl'),
      `#!/bin/sh\necho "$*" >> ${calls}\n[ "$1" != "is-active" ] || exit 3\n`,
    );
    chmodSync(path.join(bin, 'systemctl'), 0o755);
    const postinst = path.join(root, 'var/lib/dpkg/info/gatehouse-agent.postinst');
    const script = [
      'mount -t tmpfs tmpfs /run',
      'mkdir -p /run/systemd/system',
      `mount --bind ${root}/etc/default /etc/default`,
      `mount --bind ${root}/var/lib /var/lib`,
      `PATH=${bin}:$PATH sh ${postinst} configure`,
    ].join(' && ');
    const run = spawnSync('unshare', ['-m', 'sh', '-c', script], { encoding: 'utf8' });
    expect(run.status, run.stderr).to.equal(0);
    expect(readFileSync(calls, 'utf8')).to.equal(
      'daemon-reload\nis-active --quiet gatehouse-agent.service\n',
    );
    expect(run.stdout).to.include('then start it: systemctl enable --now gatehouse-agent');
  });

  it('removes its files, and on purge the device key and runtime too', () => {
    writeFileSync(path.join(root, 'var/lib/gatehouse-agent/agent.key'), 'key');
    expect(dpkg('-r', 'gatehouse-agent').status).to.equal(0);
    expect(existsSync(path.join(root, 'usr/bin/gatehouse-agent'))).to.equal(false);
    expect(existsSync(path.join(root, 'var/lib/gatehouse-agent/agent.key'))).to.equal(true);
    expect(dpkg('-P', 'gatehouse-agent').status).to.equal(0);
    expect(existsSync(path.join(root, 'var/lib/gatehouse-agent'))).to.equal(false);
    expect(existsSync(path.join(root, 'etc/default/gatehouse-agent'))).to.equal(false);
  });
});
