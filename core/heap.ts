import { setFlagsFromString } from 'node:v8';
import type { Logger } from './log';

/**
 * Why `gatehouse serve` sets how far V8's old generation may grow past what the last full collection kept
 * (configuration key `heapGrowingPercent`, 200 by default: the heap may reach three times the live size).
 *
 * V8 picks this factor itself after every full collection, from 1.1 upwards. A server that was idle, as every
 * server is before its first large transfer, is often left at the bottom of that range (V8's memory reducer asks
 * for slow growth while it waits for a quiet moment, and a busy server gives it none). With a 40 MB heap the limit
 * is then a few megabytes above the live size, less than the young generation, so V8 starts a full collection
 * after nearly every scavenge: one every 70 ms during a bulk transfer through the gateway, each freeing about 1 MB.
 * A fixed factor ends that (bench/RESULTS.md, "The old generation's growing factor"): no full collection in a
 * 512 MiB download, and half the server's CPU per GiB. A factor of 1.5 did the same for transfers but cost a fleet
 * of 10,000 agents 40 % more CPU through a restart; 3 costs it nothing measurable (its memory stayed as it was).
 *
 * The flag is read at every full collection, so setting it once the process runs applies from the next one on.
 * A choice on the node command line (`node --heap-growing-percent=N`; NODE_OPTIONS does not admit the flag) wins,
 * and 0 leaves the factor to V8.
 */
export function tuneHeap(
  percent: number,
  log: Logger,
  execArgv: readonly string[] = process.execArgv,
  setFlags: (flags: string) => void = setFlagsFromString,
): void {
  const chosen = execArgv.find((arg) => /^--heap[-_]growing[-_]percent(=|$)/.test(arg));
  if (chosen) {
    log.info({ flag: chosen }, 'heap growing factor set on the node command line');
    return;
  }
  if (percent > 0) setFlags(`--heap-growing-percent=${percent}`);
}
