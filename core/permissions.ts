import type { AuthKind } from './auth/caller';
import { type Role, roleAtLeast, roles } from './auth/roles';

/** What the matrix reads of a registered route (`http/route.ts`); the instance holds these without the router. */
export interface RouteAccess {
  method: string;
  path: string;
  summary: string;
  plugin: string;
  auth: readonly AuthKind[];
  role?: Role;
  instanceAdmin?: boolean;
}

/** One call of the permission matrix: who may make it. */
export interface PermissionRow {
  method: string;
  /** OpenAPI-style path, e.g. `/api/devices/{uid}`. */
  path: string;
  summary: string;
  plugin: string;
  /** Caller kinds accepted: user token, API key, device token, none (public), internal. */
  callers: Record<AuthKind, boolean>;
  /** Least member role, or null when the call has none (public, device or own-account calls). */
  role: Role | null;
  /** Member roles that pass the role check, highest first (none for instance administration). */
  roles: Role[];
  /** Instance administration: only instance administrators (and the local socket) may make the call. */
  instanceAdmin: boolean;
}

/**
 * The permission matrix, read from the route tables (each route's `auth` and `role`), so the published page and the
 * permission checks cannot drift apart. Published by `gatehouse permissions --json` for the docs site.
 */
export function permissionMatrix(routes: readonly RouteAccess[]): PermissionRow[] {
  const kinds: AuthKind[] = ['user', 'apiKey', 'device', 'none', 'internal', 'local'];
  return [...routes]
    .sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method))
    .map((r) => ({
      method: r.method,
      path: r.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}'),
      summary: r.summary,
      plugin: r.plugin,
      callers: Object.fromEntries(kinds.map((k) => [k, r.auth.includes(k)])) as Record<AuthKind, boolean>,
      role: r.role ?? null,
      roles: r.instanceAdmin
        ? []
        : r.role
          ? roles.filter((have) => roleAtLeast(have, r.role as Role))
          : [...roles],
      instanceAdmin: r.instanceAdmin ?? false,
    }));
}

/** The matrix as a Markdown table (role columns, then caller kinds). */
export function permissionMarkdown(rows: PermissionRow[]): string {
  const yes = (b: boolean) => (b ? 'yes' : '');
  const head = `| Method | Path | ${roles.join(' | ')} | User token | API key | Device | None |`;
  const rule = `|${' --- |'.repeat(6 + roles.length)}`;
  const body = rows.map((r) => {
    const memberCall = r.callers.user || r.callers.apiKey;
    const cells = roles.map((role) => yes(memberCall && r.roles.includes(role)));
    return `| ${r.method} | \`${r.path}\` | ${cells.join(' | ')} | ${yes(r.callers.user)} | ${yes(r.callers.apiKey)} | ${yes(r.callers.device)} | ${yes(r.callers.none)} |`;
  });
  return [head, rule, ...body].join('\n');
}
