/**
 * The device account the SSH benchmarks sign in as. Every `ssh host command` starts that account's shell on every
 * path (sshd's session for direct and `-J`, the agent's for the gateway), and bash reads `~/.bashrc` there (Debian's
 * bash does when sshd sets SSH_CLIENT; any bash does when its input is a socket, as the agent's pipes are). A
 * developer's `~/.bashrc` can cost far more than the gateway: on the CI host root's starts pyenv, about 100 processes
 * and 0.57 s per command (bench/RESULTS.md, 2026-11-28). So the benchmarks sign in as an account of their own whose
 * shell is bash with an empty home: the same start-up for all three paths, and a light one, so the ratios measure
 * the paths rather than a profile script.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { userInfo } from 'node:os';

export const BENCH_ACCOUNT = 'gatehouse-bench';
const HOME = '/var/lib/gatehouse-bench';

/**
 * The account to sign in as: `--account NAME` if given (say, `root`, to compare with figures from before
 * 2026-11-28), else `gatehouse-bench`, made here when missing (as root). Without root, this user: neither sshd nor
 * the agent can switch to another.
 */
export function benchAccount(argv = process.argv): string {
  const given = argv.indexOf('--account');
  if (given >= 0) {
    const name = argv[given + 1];
    if (!name) throw new Error('--account needs a name');
    return name;
  }
  if (process.getuid?.() !== 0) return userInfo().username;
  if (spawnSync('id', ['-u', BENCH_ACCOUNT]).status !== 0) {
    // A system account with bash and a home of its own, and nothing copied from /etc/skel into it.
    const made = spawnSync(
      'useradd',
      ['--system', '--shell', '/bin/bash', '--home-dir', HOME, '--no-create-home', BENCH_ACCOUNT],
      { encoding: 'utf8' },
    );
    if (made.status !== 0) throw new Error(`useradd ${BENCH_ACCOUNT}: ${made.stderr.trim()}`);
  }
  // No password, but not locked either: sshd without PAM refuses a locked account even with a good key.
  spawnSync('usermod', ['--password', '*', BENCH_ACCOUNT]);
  mkdirSync(HOME, { recursive: true, mode: 0o755 });
  spawnSync('chown', [`${BENCH_ACCOUNT}:`, HOME]);
  return BENCH_ACCOUNT;
}
