/**
 * Parses the SSH user name people type at the gateway: `<device-user>@<namespace>.<device>` (DESIGN.md section 7).
 * Split at the first `@`, then at the first `.`; without a dot the target is a device uid.
 */
export type SshTarget = { user: string; namespace: string; device: string } | { user: string; uid: string };

export function parseSshId(raw: string): SshTarget | undefined {
  const at = raw.indexOf('@');
  if (at <= 0 || at === raw.length - 1) return undefined;
  const user = raw.slice(0, at);
  const rest = raw.slice(at + 1);
  const dot = rest.indexOf('.');
  if (dot === -1) return /^[0-9a-f]{64}$/i.test(rest) ? { user, uid: rest.toLowerCase() } : undefined;
  const namespace = rest.slice(0, dot);
  const device = rest.slice(dot + 1);
  if (!namespace || !device) return undefined;
  return { user, namespace, device };
}
