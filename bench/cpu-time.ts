import { readFileSync } from 'node:fs';

/**
 * The CPU time (user + system, in ms, all threads) a process has used so far, from /proc, in clock ticks of 10 ms.
 * A machine's other load stretches a wall-clock figure far more than this one, so a before/after in CPU time shows
 * a difference that the wall clock of a busy machine hides.
 */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The fields after the command name (which may hold spaces) start at the state; utime and stime are 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}
