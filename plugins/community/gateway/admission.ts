import type { Duplex } from 'node:stream';
import { type Hooks, HttpError, type Logger, parseSshId, printable, type SshTarget } from '@gatehouse/core';
import type { StreamHeader } from '@gatehouse/protocol/mux';
import type { FirewallService } from '../firewall/service';
import type { NamespaceService } from '../namespaces/service';
import type { SessionService } from '../sessions/service';
import type { PublicKeyService } from '../sshkeys/service';
import { SessionJournal } from './journal';

/** What the gateway needs to know of a device (the devices feature's view has these fields). */
export interface SshDevice {
  uid: string;
  name: string;
  tenant_id: string;
  namespace: string;
  status: string;
  online: boolean;
  tags: string[];
  /** The device key (PEM): the agent's SSH host key must be this key. */
  public_key: string;
  /** `device` for an agent's device, `container` for a container a connector exposes (no agent, no key). */
  kind: 'device' | 'container';
}

/** The devices feature, as the gateway uses it. */
export interface DeviceFinder {
  findForSsh(target: SshTarget): Promise<SshDevice | undefined>;
}

/** The tunnel hub, as the gateway uses it. */
export interface TunnelOpener {
  open(uid: string, header: StreamHeader): Promise<Duplex>;
  /** The stream kinds the device's agent serves beyond `ssh` and `tcp` (the session protocol's). */
  streamKinds?(uid: string): Promise<readonly string[]>;
  /** Whether some instance of the installation holds the device's tunnel. */
  reachable?(uid: string): Promise<boolean>;
}

export type Admitted = Extract<Admission, { ok: true }>;

/**
 * Why an admission refused. Only `address` (the name is no device address at all) and `error` (the gateway could
 * not decide) say nothing of what exists, and are told to anyone; the others are told to a user who signed in
 * (see ssh-gateway.ts), and otherwise answered as a failed sign-in is.
 */
export type RefusalReason =
  | 'address'
  | 'error'
  | 'namespace'
  | 'device'
  | 'pending'
  | 'status'
  | 'plugin'
  | 'offline'
  | 'firewall';

export type Admission =
  | {
      ok: false;
      reason: RefusalReason;
      message: string;
      /** The account a sign-in aims at, when the address parses: what failed sign-ins are counted against. */
      target?: string;
      journal?: SessionJournal;
      /** Set when the address names a device: a key allowed for it signs in, and is then told the reason. */
      user?: string;
      device?: SshDevice;
    }
  | {
      ok: true;
      user: string;
      device: SshDevice;
      target: string;
      journal: SessionJournal;
      record: boolean;
      announcement: string;
    };

export interface AdmissionDeps {
  devices: DeviceFinder;
  tunnels: TunnelOpener;
  namespaces: NamespaceService;
  firewall: FirewallService;
  publicKeys: PublicKeyService;
  sessions: SessionService;
  hooks: Hooks;
  log: Logger;
  /** This gateway instance, written on the sessions it carries (LiveSessions.instance). */
  instance: string;
  /** Whether a refused attempt from this source may still be kept as a session row (per-minute budget). */
  keepRefusal(tenantId: string, ip: string): Promise<boolean>;
  /**
   * Whether the device can be reached now, asked of the upstream that reaches it (a container through its engine);
   * undefined leaves it to the agent tunnel hub.
   */
  online?(device: SshDevice): Promise<boolean | undefined>;
}

const usage =
  'sign in as <device-user>@<namespace>.<device>@<gateway> or <device-user>@<device-uid>@<gateway>';

/**
 * The key failed sign-ins to a device account count under (core/ssh/penalties.ts): the device and the user once
 * the device is known, whichever way its address named it; otherwise the address itself, with names in lower
 * case as they are looked up, so an unknown address earns penalties exactly as a known one does.
 */
export function penaltyTarget(target: SshTarget, device?: SshDevice): string {
  if (device) return `device:${device.uid}:${target.user}`;
  return 'uid' in target
    ? `uid:${target.uid}:${target.user}`
    : `name:${target.namespace.toLowerCase()}.${target.device.toLowerCase()}:${target.user}`;
}

/**
 * Decides whether a connection may go on to sign-in, before any credential is relayed (see
 * docs/content/developers/gateway.md):
 * the target parses, names an existing namespace and device, the device is accepted and online, and the
 * namespace's firewall lets this source, user and device through. A public key offered later is checked by
 * `admitsKey`, against the same admission. An admitted attempt becomes a session row once a
 * credential is tried (SessionJournal); a refused one within the source's budget. The answer carries a message for
 * the user when the connection cannot go on, and why (RefusalReason: who may be told it is the caller's choice).
 * With `tenant` (the web terminal's signed-in member), a namespace or device of another tenant is not found, as
 * one that does not exist.
 */
export async function admit(
  deps: AdmissionDeps,
  raw: string,
  attempt: { ip: string; type: 'web' | 'term'; tenant?: string },
): Promise<Admission> {
  const target = parseSshId(raw);
  // Checked in full before any query: the store never sees a name it would refuse (NUL, over-long) from a client
  // that has not signed in. The echo is stripped of control characters, so it cannot drive the user's terminal.
  if (!target) {
    return {
      ok: false,
      reason: 'address',
      message: `gatehouse: "${printable(raw)}" is not a device address; ${usage}`,
    };
  }
  const visible = (tenantId: string | undefined) =>
    tenantId !== undefined && (attempt.tenant === undefined || attempt.tenant === tenantId);
  const found = 'namespace' in target ? await deps.namespaces.byName(target.namespace) : undefined;
  const named = visible(found?.tenant_id) ? found : undefined;
  if ('namespace' in target && !named) {
    return {
      ok: false,
      reason: 'namespace',
      target: penaltyTarget(target),
      message: `gatehouse: namespace "${target.namespace}" not found`,
    };
  }
  const any = await deps.devices.findForSsh(target);
  const device = any && visible(any.tenant_id) ? any : undefined;
  if (!device) {
    return {
      ok: false,
      reason: 'device',
      target: penaltyTarget(target),
      message:
        'namespace' in target
          ? `gatehouse: device "${target.device}" not found in namespace "${target.namespace}"`
          : `gatehouse: no device with uid ${target.uid}`,
    };
  }
  // The namespace the address named is the device's own when their tenants agree: it is not read a second time.
  const ns = named?.tenant_id === device.tenant_id ? named : await deps.namespaces.byTenant(device.tenant_id);
  const record = ns?.settings.session_record ?? false;
  const journal = new SessionJournal(
    deps.sessions,
    device.tenant_id,
    {
      deviceUid: device.uid,
      username: target.user,
      ip: attempt.ip,
      type: attempt.type,
      recorded: false,
      instance: deps.instance,
    },
    deps.log,
  );
  const penalised = penaltyTarget(target, device);
  const refuse = async (reason: RefusalReason, stored: string, message: string): Promise<Admission> => {
    // A refusal is kept as a session while the source stays within its budget; beyond, it is only answered.
    if (await deps.keepRefusal(device.tenant_id, attempt.ip)) {
      journal.event('refused', 0, { reason: stored });
      // Stored before the refusal is answered: whoever looks next finds the closed session. A store that fails
      // here is logged by the journal; the refusal is answered all the same.
      await journal.end();
    }
    return {
      ok: false,
      reason,
      message: `gatehouse: ${message}`,
      target: penalised,
      journal,
      user: target.user,
      device,
    };
  };
  const label = `${device.namespace}.${device.name}`;
  if (device.status === 'pending')
    return refuse('pending', 'pending', `device ${label} is waiting to be accepted`);
  if (device.status !== 'accepted')
    return refuse('status', device.status, `device ${label} is ${device.status}`);
  try {
    await deps.hooks.run('device.beforeConnect', { tenantId: device.tenant_id, uid: device.uid });
  } catch (err) {
    // A refusal a plugin gives on purpose (4xx) is the user's message; anything else is a fault, not a verdict.
    if (err instanceof HttpError && err.status < 500) return refuse('plugin', 'refused', err.message);
    throw err;
  }
  const hub = deps.tunnels;
  const online =
    (await deps.online?.(device)) ?? (hub.reachable ? await hub.reachable(device.uid) : device.online);
  if (!online) return refuse('offline', 'offline', `device ${label} is offline`);
  const verdict = await deps.firewall.check(device.tenant_id, {
    ip: attempt.ip,
    username: target.user,
    device: { name: device.name, tags: device.tags },
  });
  if (verdict.action === 'deny') {
    return refuse(
      'firewall',
      'firewall',
      `a firewall rule of namespace ${device.namespace} denies this connection`,
    );
  }
  return {
    ok: true,
    user: target.user,
    device,
    target: penalised,
    journal,
    record,
    announcement: ns?.settings.connection_announcement ?? '',
  };
}

/**
 * Whether the namespace lets the user sign in to the device with the public key of this fingerprint: one of its
 * public keys, whose username pattern matches the user and whose filter (hostname pattern or tags) matches the
 * device. Asked of an admitted attempt, and of one refused for a device that exists (its user then signed in, and
 * is told why).
 */
export function admitsKey(
  deps: AdmissionDeps,
  a: { user: string; device: SshDevice },
  fingerprint: string,
): Promise<boolean> {
  return deps.publicKeys.allows(a.device.tenant_id, fingerprint, a.user, {
    name: a.device.name,
    tags: a.device.tags,
  });
}
