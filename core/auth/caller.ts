import type { Role } from './roles';

/** Who is making a request, resolved once per request and held in its scope. */
export type Caller =
  | { kind: 'anonymous' }
  | UserCaller
  | { kind: 'apiKey'; keyId: string; tenantId: string; role: Role; createdBy: string }
  | { kind: 'device'; uid: string; tenantId: string }
  | { kind: 'internal' }
  /** The operator at the machine: a request on the data directory's local socket (owner-only), e.g. the CLI. */
  | { kind: 'local' };

/** A signed-in person, from a user token. */
export interface UserCaller {
  kind: 'user';
  userId: string;
  username: string;
  /** The namespace the token is scoped to, if any. */
  tenantId: string | undefined;
  /** Read fresh from the membership on each request (a removed member loses access at once). */
  role: Role | undefined;
  /** An instance administrator (read fresh on each request, like the role). */
  admin?: boolean;
  /** The sign-in the token belongs to (its `sid`): signing out ends it, with every token that carries it. */
  signIn: string;
}

/** Caller kinds a route may accept. `none` is written out, never implied (deny by default). */
export type AuthKind = 'none' | 'user' | 'apiKey' | 'device' | 'internal' | 'local';

export function callerTenant(caller: Caller): string | undefined {
  switch (caller.kind) {
    case 'user':
    case 'apiKey':
    case 'device':
      return caller.tenantId;
    default:
      return undefined;
  }
}

export function callerRole(caller: Caller): Role | undefined {
  return caller.kind === 'user' || caller.kind === 'apiKey' ? caller.role : undefined;
}
