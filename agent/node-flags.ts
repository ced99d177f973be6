/**
 * The Node.js options every launcher of the agent passes (the systemd unit, the console's Docker command, the
 * documentation's commands, bench/). They cannot be set from inside a running process, nor through NODE_OPTIONS.
 *
 * `--initial-old-space-size=64` sets a floor of 64 MiB under the heap size at which V8 starts a full collection.
 * Without it V8 sets that limit a few MiB above the agent's 8 MiB heap, and the socket and pipe reads a transfer
 * keeps in flight crossed it every 11 to 12 MiB moved: about 90 full collections per GiB uploaded, and most of the
 * agent's CPU on a bulk transfer (bench/RESULTS.md, "The agent's heap floor"). An idle agent measured within
 * 1.5 MiB of its size without it.
 */
export const AGENT_NODE_FLAGS: readonly string[] = ['--initial-old-space-size=64'];

/** An option's name as V8 reads it: `--a_b=1` and `--a-b=2` are the same option. */
const optionName = (option: string) => (option.split('=')[0] ?? option).replaceAll('_', '-');

/** A note for the log when the agent was started without its options, or undefined. */
export function missingNodeFlagsNote(execArgv: readonly string[]): string | undefined {
  // An option given with another value is the operator's choice, not an omission.
  const given = new Set(execArgv.map(optionName));
  const missing = AGENT_NODE_FLAGS.filter((flag) => !given.has(optionName(flag)));
  if (missing.length === 0) return undefined;
  return (
    `node was started without ${missing.join(' ')}: large copies will cost the agent more CPU in garbage ` +
    'collection (see "The Node.js option" in /developers/agent/installing of the documentation)'
  );
}
