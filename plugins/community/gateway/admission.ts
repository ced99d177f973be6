import type { Duplex } from 'node:stream';
import type { StreamHeader } from '@gatehouse/agent/mux/session';
import { type Hooks, HttpError, type Logger, parseSshId, printable, type SshTarget } from '@gatehouse/core';
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

export type Admission =
  | { ok: false; message: string; journal?: SessionJournal }
  | {
      ok: true;
      user: string;
      device: SshDevice;
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
 * Decides whether a connection may go on to sign-in, before any credential is relayed (DESIGN.md section 7):
 * the target parses, names an existing namespace and device, the device is accepted and online, and the
 * namespace's firewall lets this source, user and device through. A public key offered later is checked by
 * `admitsKey`, against the same admission. An admitted attempt becomes a session row once a
 * credential is tried (SessionJournal); a refused one within the source's budget. The answer carries a message for
 * the user when the connection cannot go on.
 */
export async function admit(
  deps: AdmissionDeps,
  raw: string,
  attempt: { ip: string; type: 'web' | 'term' },
): Promise<Admission> {
  const target = parseSshId(raw);
  // Checked in full before any query: the store never sees a name it would refuse (NUL, over-long) from a client
  // that has not signed in. The echo is stripped of control characters, so it cannot drive the user's terminal.
  if (!target) {
    return { ok: false, message: `gatehouse: "${printable(raw)}" is not a device address; ${usage}` };
  }
  const named = 'namespace' in target ? await deps.namespaces.byName(target.namespace) : undefined;
  if ('namespace' in target && !named) {
    return { ok: false, message: `gatehouse: namespace "${target.namespace}" not found` };
  }
  const device = await deps.devices.findForSsh(target);
  if (!device) {
    return {
      ok: false,
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
  const refuse = async (reason: string, message: string): Promise<Admission> => {
    // A refusal is kept as a session while the source stays within its budget; beyond, it is only answered.
    if (await deps.keepRefusal(device.tenant_id, attempt.ip)) {
      journal.event('refused', 0, { reason });
      // Stored before the refusal is answered: whoever looks next finds the closed session. A store that fails
      // here is logged by the journal; the refusal is answered all the same.
      await journal.end();
    }
    return { ok: false, message: `gatehouse: ${message}`, journal };
  };
  const label = `${device.namespace}.${device.name}`;
  if (device.status === 'pending') return refuse('pending', `device ${label} is waiting to be accepted`);
  if (device.status !== 'accepted') return refuse(device.status, `device ${label} is ${device.status}`);
  try {
    await deps.hooks.run('device.beforeConnect', { tenantId: device.tenant_id, uid: device.uid });
  } catch (err) {
    // A refusal a plugin gives on purpose (4xx) is the user's message; anything else is a fault, not a verdict.
    if (err instanceof HttpError && err.status < 500) return refuse('refused', err.message);
    throw err;
  }
  const hub = deps.tunnels;
  const online =
    (await deps.online?.(device)) ?? (hub.reachable ? await hub.reachable(device.uid) : device.online);
  if (!online) return refuse('offline', `device ${label} is offline`);
  const verdict = await deps.firewall.check(device.tenant_id, {
    ip: attempt.ip,
    username: target.user,
    device: { name: device.name, tags: device.tags },
  });
  if (verdict.action === 'deny') {
    return refuse('firewall', `a firewall rule of namespace ${device.namespace} denies this connection`);
  }
  return {
    ok: true,
    user: target.user,
    device,
    journal,
    record,
    announcement: ns?.settings.connection_announcement ?? '',
  };
}

/**
 * Whether the namespace lets the admitted user sign in with the public key of this fingerprint: one of its public
 * keys, whose username pattern matches the user and whose filter (hostname pattern or tags) matches the device.
 */
export function admitsKey(deps: AdmissionDeps, a: Admitted, fingerprint: string): Promise<boolean> {
  return deps.publicKeys.allows(a.device.tenant_id, fingerprint, a.user, {
    name: a.device.name,
    tags: a.device.tags,
  });
}
