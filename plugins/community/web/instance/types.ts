/** A user as instance administration shows it (GET /api/admin/users). */
export interface AdminUser {
  id: string;
  name: string;
  username: string;
  email: string;
  admin: boolean;
  disabled: boolean;
  mfa: boolean;
  namespaces: number;
  created_at: string;
  last_login: string | null;
}

/** A namespace as instance administration shows it (GET /api/admin/namespaces). */
export interface AdminNamespace {
  tenant_id: string;
  name: string;
  owner: string;
  owner_username: string;
  members: number;
  device_count: number;
  max_devices: number;
  created_at: string;
}

/** GET /api/admin/health. */
export interface Health {
  version: string;
  edition: string;
  uptime_seconds: number;
  store: { kind: 'embedded' | 'postgresql'; ok: boolean; ms: number };
  cache: { kind: 'redis' | 'in-process' };
  users: number;
  disabled_users: number;
  namespaces: number;
  devices: { accepted: number; pending: number };
  memory: { rss_bytes: number; heap_used_bytes: number };
  listeners: { http: number; ssh: number };
}
