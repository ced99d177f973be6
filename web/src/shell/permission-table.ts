import type { Call } from './api/calls';
import type { MemberPermission, Role } from './api/types';

// What the signed-in role may do, read from the server's permission table (GET /info `permissions`, built from the
// routes' `role`). The console never keeps a table of its own: a screen asks about the call its button makes, and
// the server's answer to that call stays the last word. See docs/content/developers/console-modules.md.

/** Member roles, highest first. */
export const memberRoles: readonly Role[] = ['owner', 'administrator', 'operator', 'observer'];

const plural: Record<Role, string> = {
  owner: 'owners',
  administrator: 'administrators',
  operator: 'operators',
  observer: 'observers',
};

/** The roles at least `need`, highest first. */
export function rolesAtLeast(need: Role): Role[] {
  return memberRoles.slice(0, memberRoles.indexOf(need) + 1);
}

/** "owners and administrators", "owners, administrators and operators". */
export function rolesPhrase(need: Role): string {
  const names = rolesAtLeast(need).map((r) => plural[r]);
  const last = names.pop() ?? '';
  return names.length ? `${names.join(', ')} and ${last}` : last;
}

/** Whether a role may make a call, and if not, a sentence a person can read. */
export interface Permission {
  allowed: boolean;
  /** Empty when allowed: "Only owners and administrators can accept a device". */
  reason: string;
  /** Props for the button that makes the call: disabled, with the reason as its tooltip. */
  gate: { disabled?: true; title?: string };
}

const allowed: Permission = { allowed: true, reason: '', gate: {} };

/** The row of the table for a call, or undefined when its role is not checked (own-account and public calls). */
export function permissionOf(
  table: readonly MemberPermission[] | undefined,
  call: Call,
): MemberPermission | undefined {
  return table?.find((p) => p.method === call.method && p.path === call.path);
}

export function permissionFor(
  table: readonly MemberPermission[] | undefined,
  role: Role | '' | undefined,
  call: Call,
  what?: string,
): Permission {
  const row = permissionOf(table, call);
  if (!row) return allowed;
  const rank = (r: Role | '' | undefined) => (r ? memberRoles.length - memberRoles.indexOf(r) : 0);
  if (rank(role) >= rank(row.role)) return allowed;
  const action = what ?? row.summary.charAt(0).toLowerCase() + row.summary.slice(1);
  const reason = `Only ${rolesPhrase(row.role)} can ${action}`;
  return { allowed: false, reason, gate: { disabled: true, title: reason } };
}
