/**
 * The Node.js options every launcher of the agent passes (the systemd unit, the console's Docker command, the
 * platform pages, bench/). They cannot be set from inside a running process, nor through NODE_OPTIONS.
 *
 * `--initial-old-space-size=64` gives V8's old generation a floor of 64 MiB for its collection limit. V8 counts
 * the memory of live Buffers against that limit until a scavenge frees them, and a transfer keeps tens of MiB of
 * socket and pipe reads in flight between scavenges. With the limit V8 derives from the agent's 8 MiB heap, that
 * started a full collection every 11 to 12 MiB moved, 90 per GiB, and cost about half the agent's CPU on a bulk
 * transfer (bench/RESULTS.md, "The agent's heap floor"). The floor does not reserve memory: an idle agent's RSS
 * stays within a MiB or two of what it is without it.
 */
export const AGENT_NODE_FLAGS: readonly string[] = ['--initial-old-space-size=64'];

/** A note for the log when the agent was started without its options, or undefined. */
export function missingNodeFlagsNote(execArgv: readonly string[]): string | undefined {
  // An option given with another value is the operator's choice, not an omission.
  const named = (flag: string) => flag.split('=')[0] ?? flag;
  const missing = AGENT_NODE_FLAGS.filter((flag) => !execArgv.some((given) => named(given) === named(flag)));
  if (missing.length === 0) return undefined;
  return `node was started without ${missing.join(' ')}: bulk transfers will spend more CPU in garbage collection (see the installing page)`;
}
