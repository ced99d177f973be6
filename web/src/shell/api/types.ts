// The shell's own types: the instance, the signed-in person and their namespace, and a page of a list. A plugin's
// screens take their entity types from the plugin's own TypeBox schemas; the shell names no plugin, so these are
// its reading of the answers it uses, held to the community plugin's schemas by test/unit/web/shell-types.test.ts.
// Fields the server may omit are optional.

export type Role = 'owner' | 'administrator' | 'operator' | 'observer';

export interface InstanceInfo {
  version: string;
  endpoints: { ssh: string; api: string };
  setup: boolean;
  authentication: { local: boolean; saml: boolean };
  plugins?: string[];
  /** The running plugins' console modules, in load order. */
  console_modules?: ConsoleModuleEntry[];
  /** The calls whose least member role the server checks, from its permission table (`useCan` reads them). */
  permissions?: MemberPermission[];
}

/** One call of the server's permission table: a member needs `role` or higher to make it. */
export interface MemberPermission {
  method: string;
  /** OpenAPI-style path, as a `Call` writes it. */
  path: string;
  summary: string;
  role: Role;
}

/** A plugin's console module: an ES module whose default export is its slots (`defineWebModule`). */
export interface ConsoleModuleEntry {
  plugin: string;
  url: string;
}

export interface AuthenticatedUser {
  token: string;
  id: string;
  /** local: the account has a password; saml: single sign-on made it (its password is the IdP's). */
  origin?: 'local' | 'saml';
  user: string;
  name: string;
  email: string;
  recovery_email?: string;
  tenant: string;
  role?: Role | '';
  mfa: boolean;
  max_namespaces?: number;
  /** An instance administrator: the console shows the Instance area. */
  admin?: boolean;
}

/** One page of a list answer: the rows and the X-Total-Count header. */
export interface Page<T> {
  items: T[];
  total: number;
}

/** A namespace as the shell's namespace switcher lists it (GET /api/namespaces). */
export interface NamespaceSummary {
  name: string;
  tenant_id: string;
}

/** A device as the device-actions slot sees it; the plugin that lists devices owns the full entity. */
export interface DeviceSummary {
  uid: string;
  name: string;
  status: string;
  online: boolean;
}
