import type { Role } from '@gatehouse/console';

// The community plugin's entities as SPEC.md section 3 names them. Fields the server may omit are optional.

export type DeviceStatus = 'accepted' | 'rejected' | 'pending' | 'removed' | 'unused';

export interface Device {
  uid: string;
  name: string;
  identity?: { mac?: string };
  info?: { id?: string; pretty_name?: string; version?: string; arch?: string; platform?: string };
  public_key?: string;
  tenant_id: string;
  last_seen?: string;
  online: boolean;
  namespace?: string;
  status: DeviceStatus;
  status_update_at?: string;
  created_at?: string;
  remote_addr?: string;
  position?: { latitude: number; longitude: number };
  tags?: string[];
  public_url?: boolean;
  acceptable?: boolean;
  /** An accepted device with this identity but another key (this one is another device). */
  identity_conflict?: { uid: string; name: string } | null;
}

export interface SessionEvent {
  type: string;
  timestamp: string;
  data?: unknown;
  seat?: number;
}

export interface Session {
  uid: string;
  device_uid: string;
  /** The session's device; null once it was deleted, and left out entirely by servers older than 0.1. */
  device?: Device | null;
  tenant_id: string;
  username: string;
  ip_address: string;
  started_at: string;
  last_seen: string;
  active: boolean;
  authenticated: boolean;
  recorded: boolean;
  type: 'web' | 'term' | string;
  term?: string;
  events?: { types?: string[]; seats?: number[]; items?: SessionEvent[] };
}

export interface RecordedEntry {
  uid: string;
  seat: number;
  message: string;
  tenant_id?: string;
  time: string;
  width: number;
  height: number;
}

export type TagsOrHostname = { hostname: string } | { tags: string[] };

export interface PublicKey {
  data: string;
  fingerprint: string;
  name: string;
  username: string;
  filter: TagsOrHostname;
  tenant_id: string;
  created_at: string;
}

export interface Member {
  id: string;
  added_at?: string;
  expires_at?: string;
  role: Role;
  type?: 'personal' | 'team';
  status?: 'accepted' | 'pending';
  email?: string;
  username?: string;
}

export interface Namespace {
  name: string;
  owner: string;
  tenant_id: string;
  members: Member[];
  settings: { session_record: boolean; connection_announcement?: string; require_install_key?: boolean };
  max_devices: number;
  device_count?: number;
  created_at?: string;
}

export interface ApiKey {
  name: string;
  tenant_id: string;
  created_by: string;
  role: Role;
  expires_in: number;
  created_at: string;
  updated_at?: string;
  id?: string;
}

export interface InstallKey {
  id: string;
  tenant_id: string;
  name: string;
  /** The public beginning of the key text. */
  key_hint: string;
  created_by: string;
  expires_at: string | null;
  /** 0: no limit. */
  usage_limit: number;
  used_times: number;
  last_used_at: string | null;
  created_at: string;
  updated_at?: string;
  /** The key itself: only in the answers of create and rotate. */
  key?: string;
}

export interface FirewallRule {
  id: string;
  tenant_id: string;
  action: 'allow' | 'deny';
  active: boolean;
  filter: TagsOrHostname;
  priority: number;
  source_ip: string;
  username: string;
}

export interface Tunnel {
  address: string;
  namespace: string;
  device: string;
  host: string;
  port: number;
  ttl: number;
  expires_in?: string | number;
  created_at: string;
}

export interface Stats {
  registered_devices: number;
  online_devices: number;
  pending_devices: number;
  rejected_devices: number;
  active_sessions: number;
}

export interface MfaSecret {
  link: string;
  secret: string;
  recovery_codes: string[];
}
