import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';

/** A process's CPU seconds so far from /proc/<pid>/stat ('self' for this one): user, system, and reaped children. */
export function processTimes(pid: number | 'self'): { user: number; sys: number; children: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    // utime, stime, cutime, cstime (fields 14 to 17 of proc(5), counted from the state field here).
    const [user = 0, sys = 0, cuser = 0, csys = 0] = fields.slice(11, 15);
    return { user: user / 100, sys: sys / 100, children: (cuser + csys) / 100 };
  } catch {
    return { user: 0, sys: 0, children: 0 };
  }
}

/** Seconds of CPU a process has used so far, its own and that of the children it has waited for. */
export function processCpuSeconds(pid: number | 'self'): number {
  const { user, sys, children } = processTimes(pid);
  return user + sys + children;
}

/**
 * What a process has asked of the kernel so far: read and write system calls and their bytes (/proc/<pid>/io; writev
 * counts as one write, sockets included), and its context switches (/proc/<pid>/status), voluntary (it waited for
 * something) and not (the scheduler took the CPU away). Zeros when the process is gone.
 */
export interface Activity {
  reads: number;
  writes: number;
  readBytes: number;
  writtenBytes: number;
  voluntary: number;
  involuntary: number;
}

export function processActivity(pid: number): Activity {
  const field = (text: string, name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0);
  try {
    const io = readFileSync(`/proc/${pid}/io`, 'utf8');
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return {
      reads: field(io, 'syscr'),
      writes: field(io, 'syscw'),
      readBytes: field(io, 'rchar'),
      writtenBytes: field(io, 'wchar'),
      voluntary: field(status, 'voluntary_ctxt_switches'),
      involuntary: field(status, 'nonvoluntary_ctxt_switches'),
    };
  } catch {
    return { reads: 0, writes: 0, readBytes: 0, writtenBytes: 0, voluntary: 0, involuntary: 0 };
  }
}

/** `after` less `before`, field by field. */
export function activityBetween(before: Activity, after: Activity): Activity {
  return {
    reads: after.reads - before.reads,
    writes: after.writes - before.writes,
    readBytes: after.readBytes - before.readBytes,
    writtenBytes: after.writtenBytes - before.writtenBytes,
    voluntary: after.voluntary - before.voluntary,
    involuntary: after.involuntary - before.involuntary,
  };
}

/**
 * CPU seconds of the machine's PostgreSQL so far: every process named `postgres`, with the children it reaped
 * (the postmaster reaps the backends of closed connections). Includes other users of the same server.
 */
export function postgresCpuSeconds(): number {
  return totalSeconds(postgresCpuByRole());
}

/** The sum of a reading of postgresCpuByRole. */
export function totalSeconds(roles: Map<string, number>): number {
  return [...roles.values()].reduce((a, b) => a + b, 0);
}

/**
 * The same CPU seconds by what each process is, from its title: `backend` for the connections' processes, the
 * background workers by name (`walwriter`, `checkpointer`, `autovacuum worker`, ...), and `postmaster` with the
 * children it reaped (backends of closed connections, autovacuum workers that have finished).
 */
export function postgresCpuByRole(): Map<string, number> {
  const roles = new Map<string, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let title: string;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
      title = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
    } catch {
      continue;
    }
    const role = postgresRole(title);
    roles.set(role, (roles.get(role) ?? 0) + processCpuSeconds(Number(entry)));
  }
  return roles;
}

/** "postgres: 15/main: walwriter" is the wal writer; a title naming a user, database and address is a backend. */
function postgresRole(title: string): string {
  const described = /^postgres: (?:[^:]+: )?(.*)$/.exec(title)?.[1];
  if (described === undefined) return 'postmaster';
  if (/\(\d+\)|\[local\]/.test(described)) return 'backend';
  return described.replace(/\s+(launcher|worker)\b.*$/, ' $1').trim();
}

/** What CPU moved between two readings of postgresCpuByRole, largest first, as "role 0.12 s, ...". */
export function postgresCpuDifference(before: Map<string, number>, after: Map<string, number>): string {
  return [...after]
    .map(([role, seconds]) => [role, seconds - (before.get(role) ?? 0)] as const)
    .filter(([, seconds]) => seconds >= 0.005)
    .sort((a, b) => b[1] - a[1])
    .map(([role, seconds]) => `${role} ${seconds.toFixed(2)} s`)
    .join(', ');
}

/** The machine's load averages, for the log line of each figure. */
export const loadAverage = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/** Seconds all cores of the machine spent busy so far (user, system, interrupts), from /proc/stat. */
export function machineBusySeconds(): number {
  const fields =
    readFileSync('/proc/stat', 'utf8').split('\n')[0]?.trim().split(/\s+/).slice(1).map(Number) ?? [];
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0] = fields;
  return (user + nice + system + irq + softirq) / 100;
}

/**
 * A CPU-accounting control group of the benchmark's own: the CPU time of every process put in it and of all they
 * start, counted whether or not anyone waits for them. A parent's reaped-children figure misses processes nobody
 * waits for: OpenSSH's listener never adds its sessions' time to its own (a 1 GiB download through a direct sshd
 * showed 0.03 s on the listener against 2.5 s of session processes), and a client's ProxyCommand is left to init.
 * cgroup v1's `cpuacct` controller or cgroup v2; `create` answers undefined where neither can be written (no root,
 * a read-only /sys), and the figures that need it say so.
 */
export class CpuGroup {
  private constructor(
    private readonly dir: string,
    private readonly usage: () => number,
    private readonly root: string,
  ) {}

  static create(name: string): CpuGroup | undefined {
    // Where each version keeps the groups, and how it reads a group's CPU time in seconds.
    const versions = [
      {
        root: '/sys/fs/cgroup/cpuacct',
        marker: 'cpuacct.usage',
        seconds: (dir: string) => Number(readFileSync(path.join(dir, 'cpuacct.usage'), 'utf8')) / 1e9,
      },
      {
        root: '/sys/fs/cgroup',
        marker: 'cgroup.controllers',
        seconds: (dir: string) =>
          Number(/^usage_usec (\d+)/m.exec(readFileSync(path.join(dir, 'cpu.stat'), 'utf8'))?.[1] ?? 0) / 1e6,
      },
    ];
    const version = versions.find((v) => existsSync(path.join(v.root, v.marker)));
    if (!version) return undefined;
    const dir = path.join(version.root, `${name}-${process.pid}`);
    try {
      mkdirSync(dir);
    } catch {
      return undefined; // not ours to make
    }
    return new CpuGroup(dir, () => version.seconds(dir), version.root);
  }

  /** Moves a running process (with its threads) into the group; what it starts from now on is born there. */
  add(pid: number | 'self'): void {
    writeFileSync(path.join(this.dir, 'cgroup.procs'), String(pid === 'self' ? process.pid : pid));
  }

  /** CPU seconds of everything that ran in the group since it was made. */
  seconds(): number {
    return this.usage();
  }

  /** Moves what is left back to the root group and removes the group. */
  remove(): void {
    try {
      for (const pid of readFileSync(path.join(this.dir, 'cgroup.procs'), 'utf8')
        .split('\n')
        .filter(Boolean)) {
        try {
          writeFileSync(path.join(this.root, 'cgroup.procs'), pid);
        } catch {
          // exited meanwhile
        }
      }
      rmdirSync(this.dir);
    } catch {
      // already gone
    }
  }
}
