#!/usr/bin/env node
// The suites drive real programs: Debian's Chromium (console and docs), the OpenSSH client, server and SFTP server,
// sshpass (password prompts), sudo and curl (the agent's documented install command), and ssh-audit (the gateway's
// algorithms, test/security). This checks they are present and, on Debian as root, installs what is missing from
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
