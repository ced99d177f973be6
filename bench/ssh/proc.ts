import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';

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
 * CPU seconds of the machine's PostgreSQL so far: every process named `postgres`, with the children it reaped
 * (the postmaster reaps the backends of closed connections). Includes other users of the same server.
 */
export function postgresCpuSeconds(): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
    } catch {
      continue;
    }
    total += processCpuSeconds(Number(entry));
  }
  return total;
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
