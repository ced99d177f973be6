/**
 * Parses the SSH user name people type at the gateway: `<device-user>@<namespace>.<device>` (see docs/content/developers/gateway.md).
 * Split at the first `@`, then at the first `.`; without a dot the target is a device uid.
 *
 * Every part is checked against what can exist before anything is looked up, so the store never sees a name it
 * would refuse (a NUL byte, a name longer than its column) from an unauthenticated client:
 * - device user: 1 to 64 letters, digits, `_`, `.` and `-`, not starting with `.` or `-` (POSIX portable names);
 * - namespace: 3 to 30 letters, digits and hyphens, not starting or ending with a hyphen (namespace names);
 * - device: 1 to 63 letters, digits and hyphens, not starting or ending with a hyphen (device names);
 * - uid: 64 hex digits.
 */
export type SshTarget = { user: string; namespace: string; device: string } | { user: string; uid: string };

/** Longest SSH user name the gateway reads: the longest valid `user@namespace.device` is 64 + 1 + 30 + 1 + 63. */
export const SSHID_MAX_LENGTH = 159;
export const DEVICE_USER = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/;
export const SSHID_NAMESPACE = /^[A-Za-z0-9][A-Za-z0-9-]{1,28}[A-Za-z0-9]$/;
export const SSHID_DEVICE = /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const UID = /^[0-9a-f]{64}$/i;

export function parseSshId(raw: string): SshTarget | undefined {
  if (typeof raw !== 'string' || raw.length > SSHID_MAX_LENGTH) return undefined;
  const at = raw.indexOf('@');
  if (at <= 0) return undefined;
  const user = raw.slice(0, at);
  const rest = raw.slice(at + 1);
  if (!DEVICE_USER.test(user)) return undefined;
  const dot = rest.indexOf('.');
  if (dot === -1) return UID.test(rest) ? { user, uid: rest.toLowerCase() } : undefined;
  const namespace = rest.slice(0, dot);
  const device = rest.slice(dot + 1);
  if (!SSHID_NAMESPACE.test(namespace) || !SSHID_DEVICE.test(device)) return undefined;
  return { user, namespace, device };
}

/**
 * Text that came from an unauthenticated client, made safe to echo to a terminal: control characters (escape
 * sequences, NUL, bells, carriage returns) become `?`, and it is cut to `max` characters.
 */
export function printable(text: string, max = 80): string {
  // C0 controls, DEL, C1 controls (8-bit CSI among them), and the bidirectional overrides.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this function's job
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, '?');
  return clean.length > max ? `${clean.slice(0, max)}...` : clean;
}
