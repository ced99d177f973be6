#!/usr/bin/env node
// The suites drive real programs: Debian's Chromium (console and docs), the OpenSSH client, server and SFTP server,
// sshpass (password prompts), sudo and curl (the agent's documented install command), ssh-audit (the gateway's
// algorithms, test/security), podman with runc and a static busybox (the container engine of the connector
// tests, test/support/podman.ts), and what the release's tests use (podman-compose, dpkg, systemd-analyze). This checks they are present and, on Debian as root, installs what is missing from
// Debian's own packages; elsewhere it names the packages to install and stops.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const tools = [
  { path: '/usr/bin/chromium', pkg: 'chromium' },
  { path: '/usr/bin/ssh', pkg: 'openssh-client' },
  { path: '/usr/bin/scp', pkg: 'openssh-client' },
  { path: '/usr/bin/sftp', pkg: 'openssh-client' },
  { path: '/usr/sbin/sshd', pkg: 'openssh-server' },
  { path: '/usr/lib/openssh/sftp-server', pkg: 'openssh-sftp-server' },
  { path: '/usr/bin/sshpass', pkg: 'sshpass' },
  { path: '/usr/bin/mkpasswd', pkg: 'whois' },
  { path: '/usr/bin/sudo', pkg: 'sudo' },
  { path: '/usr/bin/curl', pkg: 'curl' },
  { path: '/usr/bin/setpriv', pkg: 'util-linux' },
  { path: '/usr/bin/ssh-audit', pkg: 'ssh-audit' },
  { path: '/usr/bin/podman', pkg: 'podman' },
  // crun, podman's default runtime, fails on this host's cgroup layout; the tests configure runc.
  { path: '/usr/sbin/runc', pkg: 'runc' },
  { path: '/bin/busybox', pkg: 'busybox-static' },
  // The release's tests (test/packaging): the compose file under podman-compose, whose services find each other by
  // name through CNI's dnsname plugin; the Debian package built and installed with dpkg, its unit checked by systemd.
  { path: '/usr/bin/podman-compose', pkg: 'podman-compose' },
  { path: '/usr/lib/cni/dnsname', pkg: 'golang-github-containernetworking-plugin-dnsname' },
  { path: '/usr/bin/dpkg-deb', pkg: 'dpkg' },
  { path: '/usr/bin/systemd-analyze', pkg: 'systemd' },
  // The arm64 agent executable, started under QEMU's user emulation with Debian's arm64 C libraries.
  { path: '/usr/bin/qemu-aarch64-static', pkg: 'qemu-user-static' },
  { path: '/usr/aarch64-linux-gnu/lib/libc.so.6', pkg: 'libc6-arm64-cross' },
  { path: '/usr/aarch64-linux-gnu/lib/libstdc++.so.6', pkg: 'libstdc++6-arm64-cross' },
  { path: '/usr/aarch64-linux-gnu/lib/libgcc_s.so.1', pkg: 'libgcc-s1-arm64-cross' },
  // The SAML tests make their IdP's certificate, and run the SAML docs' commands (openssl, jq).
  { path: '/usr/bin/openssl', pkg: 'openssl' },
  { path: '/usr/bin/jq', pkg: 'jq' },
  // A session's recording, downloaded as asciicast v2, is played by asciinema's own player.
  { path: '/usr/bin/asciinema', pkg: 'asciinema' },
];

const missing = [...new Set(tools.filter((t) => !existsSync(t.path)).map((t) => t.pkg))];
if (missing.length === 0) process.exit(0);

const canApt = process.getuid?.() === 0 && spawnSync('apt-get', ['--version']).status === 0;
if (!canApt) {
  console.error(`The test suites need these Debian packages: ${missing.join(' ')}`);
  console.error(`Install them with: sudo apt-get install -y ${missing.join(' ')}`);
  process.exit(1);
}
console.log(`Installing test tools from Debian: ${missing.join(' ')}`);
const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], {
  stdio: 'inherit',
  env,
});
