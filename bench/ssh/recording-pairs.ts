import type { ProcessWorld } from './world';

/** Turns the bench namespace's session recording on or off. */
export async function setRecording(world: ProcessWorld, on: boolean): Promise<void> {
  const res = await world.api('PUT', `/api/namespaces/${world.owner.tenant}`, {
    settings: { session_record: on },
  });
  if (res.status !== 200) throw new Error(`setting recording answered ${res.status}`);
}

/**
 * `ssh` arguments (options, then the destination last) that print `bytes` of terminal output on a PTY: one character
 * repeated, as the recording benchmarks measure it.
 */
export function ptyOutput(args: string[], bytes: number): string[] {
  return [...args.slice(0, -1), '-tt', args.at(-1) as string, `head -c ${bytes} /dev/zero | tr "\\0" x`];
}

/**
 * Waits until no session of the world is open any more (the journal has flushed and closed it), at most 5 s: a
 * recorded run's last writes to the store then fall within that run, not into the next one.
 */
export async function settled(world: ProcessWorld): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const res = await world.api('GET', '/api/sessions?per_page=5');
    const list = (Array.isArray(res.body) ? res.body : []) as { active?: boolean }[];
    if (!list.some((s) => s.active)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Recording off against on, as bench/ssh/recording.ts and run.ts measure it: one run of each first, not counted
 * (the first connection warms the server's code paths and the store's cache), then `pairs` pairs whose first half
 * alternates, so a trend in the machine's load does not favour one. `shown` hears each pair as it completes.
 */
export async function recordingPairs<T>(
  pairs: number,
  run: (on: boolean) => Promise<T>,
  shown: (off: T, on: T, pair: number) => void,
): Promise<{ off: T[]; on: T[] }> {
  const off: T[] = [];
  const on: T[] = [];
  if (pairs <= 0) return { off, on };
  await run(false);
  await run(true);
  for (let i = 0; i < pairs; i++) {
    const onFirst = i % 2 === 1;
    const first = await run(onFirst);
    const second = await run(!onFirst);
    const [a, b] = onFirst ? [second, first] : [first, second];
    off.push(a);
    on.push(b);
    shown(a, b, i + 1);
  }
  return { off, on };
}
