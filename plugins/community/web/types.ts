// The console's types of the community plugin's entities are the server's own, derived from the TypeBox schemas
// the routes validate and document with (`Static<...>`). They are imported as types only, so no server code reaches
// the browser bundle (test/unit/web/entity-types.test.ts).
export type {
  AdminNamespaceView as AdminNamespace,
  AdminUserView as AdminUser,
  Health,
} from '../admin/schemas';
export type { ApiKeyView as ApiKey, CreatedApiKey } from '../apikeys/schemas';
export type { DeviceStatus, DeviceView as Device } from '../devices/schemas';
export type { FirewallRuleView as FirewallRule } from '../firewall/schemas';
export type { InstallKeyView as InstallKey, InstallKeyWithKey } from '../installkeys/schemas';
export type { DeviceFilter } from '../matching/schemas';
export type { MfaSecret } from '../mfa/schemas';
export type { MemberView as Member, NamespaceView as Namespace } from '../namespaces/schemas';
export type { RecordEntry as RecordedEntry, Session, SessionEvent } from '../sessions/schemas';
export type { PublicKeyView as PublicKey } from '../sshkeys/schemas';
export type { Stats } from '../stats/schemas';
export type { TunnelView as Tunnel } from '../tunnels/schemas';
