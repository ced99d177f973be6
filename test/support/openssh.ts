// The arguments the tests and benchmarks give the real OpenSSH client (ssh, scp, sftp) on its way through the
// gateway: one list, so that every run is as hermetic as the others.

/**
 * What every run starts with: no user or system configuration, and no host key prompt. The gateway's host key is
 * remembered in `knownHosts` (a file of the test's own) or nowhere; `connectTimeout` in seconds; `quiet` leaves
 * only errors on standard error.
 */
export function clientOptions(
  o: { knownHosts?: string; connectTimeout?: number; quiet?: boolean } = {},
): string[] {
  return [
    '-F',
    '/dev/null',
    '-o',
    'StrictHostKeyChecking=no',
    '-o',
    `UserKnownHostsFile=${o.knownHosts ?? '/dev/null'}`,
    '-o',
    'GlobalKnownHostsFile=/dev/null',
    ...(o.quiet ? ['-o', 'LogLevel=ERROR'] : []),
    ...(o.connectTimeout ? ['-o', `ConnectTimeout=${o.connectTimeout}`] : []),
  ];
}

/** Signing in with a password only, asked once (sshpass answers the prompt). */
export function passwordOptions(): string[] {
  return [
    '-o',
    'PreferredAuthentications=password',
    '-o',
    'PubkeyAuthentication=no',
    '-o',
    'NumberOfPasswordPrompts=1',
  ];
}

/** Signing in with a private key file only: no agent's keys, no password, no prompts. */
export function keyOptions(keyFile: string): string[] {
  return [
    '-i',
    keyFile,
    '-o',
    'IdentitiesOnly=yes',
    '-o',
    'PreferredAuthentications=publickey',
    '-o',
    'BatchMode=yes',
  ];
}
