import { definePlugin } from '@gatehouse/core';
import { adminCommands } from './admin/cli';
import * as admin from './admin/index';
import * as agentdist from './agentdist/index';
import * as apikeys from './apikeys/index';
import * as devices from './devices/index';
import * as events from './events/index';
import * as firewall from './firewall/index';
import * as gateway from './gateway/index';
import { registerRecordingMetrics } from './gateway/recording-metrics';
import * as info from './info/index';
import * as installkeys from './installkeys/index';
import * as members from './members/index';
import * as mfa from './mfa/index';
import * as namespaces from './namespaces/index';
import * as saml from './saml-stand-ins/index';
import * as sessions from './sessions/index';
import * as setup from './setup/index';
import * as sshkeys from './sshkeys/index';
import * as stats from './stats/index';
import * as tags from './tags/index';
import * as tunnels from './tunnels/index';
import * as users from './users/index';

/**
 * The base product: users, namespaces, members, devices, sessions, keys, firewall, tunnels, setup and info. Each
 * feature folder registers itself; this list is their order, which is the order their routes are matched in.
 */
export default definePlugin({
  name: 'community',
  dependsOn: [],
  migrations: new URL('./migrations/', import.meta.url),
  cli: adminCommands,
  console: { dir: new URL('./web/dist/', import.meta.url), entry: 'index.js' },
  register(ctx) {
    info.register(ctx);
    setup.register(ctx);
    users.register(ctx);
    // Before namespaces: `/api/namespaces/api-key` and `/api/namespaces/install-keys` would otherwise match
    // `/api/namespaces/:tenant`.
    apikeys.register(ctx);
    installkeys.register(ctx);
    namespaces.register(ctx);
    members.register(ctx);
    mfa.register(ctx);
    saml.register(ctx);
    agentdist.register(ctx);
    admin.register(ctx);
    // Tunnels before devices: tunnel hosts take upgrades first (see tunnels/index.ts).
    tunnels.register(ctx);
    devices.register(ctx);
    tags.register(ctx);
    stats.register(ctx);
    events.register(ctx);
    sshkeys.register(ctx);
    firewall.register(ctx);
    gateway.register(ctx);
    sessions.register(ctx);
  },
  async boot(ctx) {
    // Several instances (see docs/content/developers/architecture.md): close calls and disconnects reach the instance that holds the session
    // or the tunnel.
    await ctx.container.cradle.liveSessions.listen();
    registerRecordingMetrics(ctx.container.cradle.metrics.registry);
    await ctx.container.cradle.tunnelHub.listen();
    // A sign-out on any instance closes the web terminals its sign-in opened on this one.
    await ctx.container.cradle.webTerminal.listen();
    ctx.every(3600, 'ended sign-ins', () => ctx.container.cradle.users.forgetEndedSignIns());
    // Recordings older than their namespace keeps them (settings.recording_retention_days).
    ctx.every(3600, 'recording retention', async () => {
      const removed = await ctx.container.cradle.sessions.expireRecordings();
      if (removed > 0) ctx.log.info({ sessions: removed }, 'recordings removed by retention');
    });
  },
});

// The public face of the community plugin: what other plugins, and outside authors, may build on. Import these
// from '@gatehouse/plugin-community' by name; nothing else of this package is reachable (its package.json exports
// only this file). The developer docs' "Writing a plugin" page lists them with what each is for.

// Tunnels dialed in by outside processes (device agents here, connectors in the enterprise plugin).
export { AGENT_CONNECTION_PATH, devicePeers, type TunnelAdmission } from './agent-tunnels/device-peers';
export {
  DeviceOffline,
  type PeerAdmission,
  refuse as refuseUpgrade,
  TunnelHub,
  type TunnelHubDeps,
  type TunnelHubOptions,
  type TunnelPeers,
} from './agent-tunnels/hub';
// The stored entities other features read and write, through a TenantStore of the request scope.
export { Device } from './devices/model';
// Services, as types of the container entries of the same names (resolve them from the cradle or the request scope).
export type { DeviceService, NamespaceDevices } from './devices/service';
// Rules that other features apply the same way.
export { acceptable, defaultDeviceName, usage } from './devices/service';
// The SSH gateway's extension point: another kind of target (containers) is an upstream dialer.
export type { SshDevice } from './gateway/admission';
export {
  type SessionRequest,
  type TargetSession,
  type Upstream,
  type UpstreamAuth,
  type UpstreamDialer,
  UpstreamRefused,
} from './gateway/upstream';
export { Member } from './members/model';
export type { MemberService } from './members/service';
export type { MfaService } from './mfa/service';
export { digest } from './mfa/service';
export { Namespace } from './namespaces/model';
// Schemas of the fields other plugins' routes take or answer.
export { tenantParams } from './namespaces/schemas';
export type { NamespaceService } from './namespaces/service';
export { Lockout, lockedOut } from './users/lockout';
export { User } from './users/model';
export { email, name, password, userAuth, username } from './users/schemas';
export type { UserRow, UserService } from './users/service';
export { newSignIn, newUserId } from './users/service';
export { sourceBlock } from './users/source-limit';
