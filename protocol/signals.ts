/**
 * SSH's signal names (RFC 4254 section 6.10): the only ones an `exit-signal` or `signal` request may carry, and
 * the only ones ssh2 sends (it throws on any other, which ended the agent when a program died of SIGVTALRM).
 */
export const SSH_SIGNALS: ReadonlySet<string> = new Set([
  'ABRT',
  'ALRM',
  'FPE',
  'HUP',
  'ILL',
  'INT',
  'KILL',
  'PIPE',
  'QUIT',
  'SEGV',
  'TERM',
  'USR1',
  'USR2',
]);

/**
 * A program's ending signal as SSH can report it: its own name when SSH has one, otherwise KILL with the real name
 * in the description, so the user still learns it (`SIGBUS`, `SIGVTALRM`).
 */
export function sshExitSignal(name: string, description = ''): { signal: string; description: string } {
  const bare = name.replace(/^SIG/, '');
  if (SSH_SIGNALS.has(bare)) return { signal: bare, description };
  return { signal: 'KILL', description: description || `killed by SIG${bare.slice(0, 16)}` };
}
