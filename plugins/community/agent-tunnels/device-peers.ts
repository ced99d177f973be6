import type { IncomingMessage } from 'node:http';
import type { Cache, HookMap, Hooks, TokenService } from '@gatehouse/core';
import {
  AGENT_PROTOCOL,
  checkProof,
  PROOF_WINDOW_SECONDS,
  protocolRefusal,
  STREAM_KINDS_HEADER,
} from '@gatehouse/protocol/agent-proof';
import { SESSION_STREAM_KINDS } from '@gatehouse/protocol/mux';
import type { PeerAdmission, TunnelPeers } from './hub';

/** Whether a device may hold a tunnel, decided by the plugin that owns devices. */
export type TunnelAdmission =
  | {
      ok: true /** The device's registered public key (PEM): the tunnel's proof is checked against it. */;
      publicKey: string;
    }
  | { ok: false; status: 401 | 403 | 404; message: string; deviceStatus?: string };

declare module '@gatehouse/core/hooks' {
  interface HookMap {
    /**
     * A tunnel request whose device token verified. The owner of devices says whether the device may hold a
     * tunnel by setting `admission` (only accepted devices may, with their registered key); until a handler does,
     * the request is refused as an unknown device.
     */
    'tunnel.admit': { device: { uid: string; tenantId: string }; admission: TunnelAdmission };
    /**
     * A device's tunnel came up on this instance. The hooks of one device run in order: `tunnel.online` before
     * the `tunnel.offline` of the same tunnel.
     */
    'tunnel.online': { uid: string; remoteAddr: string };
    /** Tunnels went down (a close, or every tunnel of this instance at stop). */
    'tunnel.offline': { uids: string[] };
    /** Devices whose tunnels answered a ping this round (one call for all of them). */
    'tunnel.alive': { uids: string[] };
  }
}

export const AGENT_CONNECTION_PATH = '/agent/connection';
/** On the internal listener: another instance asks for a stream to an agent whose tunnel is here. */
export const FORWARD_PATH = '/internal/tunnel-stream';

/** The stream kinds a tunnel's agent says it serves: known kinds only, so the header cannot grow the lease. */
function streamKinds(header: string | string[] | undefined): string[] {
  const text = Array.isArray(header) ? header.join(',') : (header ?? '');
  const known = new Set<string>(SESSION_STREAM_KINDS);
  return [...new Set(text.split(',').map((kind) => kind.trim()))].filter((kind) => known.has(kind));
}

/**
 * Device agents as tunnel peers. An agent dials `/agent/connection` with its device token and a proof, signed with
 * its device key, that it holds that key for this tunnel (agent protocol 2); the plugin that owns devices admits
 * the device (`tunnel.admit`: accepted devices only) and hears its presence (`tunnel.online`, `offline`, `alive`).
 */
export function devicePeers(deps: { tokens: TokenService; hooks: Hooks; nonces: Cache }): TunnelPeers {
  const { tokens, hooks, nonces } = deps;

  /** Why the tunnel request does not prove possession of the device key, or undefined when it does. */
  async function checkTunnelProof(
    req: IncomingMessage,
    uid: string,
    publicKey: string,
    tokenProtocol: unknown,
  ): Promise<{ status: 401 | 403; message: string } | undefined> {
    const proof = checkProof(req.headers, { purpose: 'tunnel', uid }, publicKey);
    const refused = 'missing or malformed jwt or API token: device key proof refused';
    if (!proof.ok) {
      if (proof.reason === 'protocol') return { status: 403, message: protocolRefusal(proof.protocol) };
      return { status: 401, message: `${refused}, ${proof.message}` };
    }
    if (tokenProtocol !== AGENT_PROTOCOL) {
      return {
        status: 401,
        message: `${refused}, the device token predates agent protocol ${AGENT_PROTOCOL}`,
      };
    }
    if (!(await nonces.setIfAbsent(`agent-proof:${proof.nonce}`, '1', 2 * PROOF_WINDOW_SECONDS))) {
      return { status: 401, message: `${refused}, it was used before` };
    }
    return undefined;
  }

  return {
    name: 'device',
    path: AGENT_CONNECTION_PATH,
    forwardPath: FORWARD_PATH,
    async admit(req): Promise<PeerAdmission> {
      const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
      let device: { uid: string; tenantId: string };
      let protocol: unknown;
      try {
        if (!bearer) throw new Error('no token');
        const claims = await tokens.verify(bearer, 'device');
        if (typeof claims.tenant !== 'string') throw new Error('no tenant');
        device = { uid: claims.sub, tenantId: claims.tenant };
        protocol = claims.ap;
      } catch {
        return { ok: false, status: 401, body: { message: 'missing or malformed jwt or API token' } };
      }
      const asked: HookMap['tunnel.admit'] = {
        device,
        admission: { ok: false, status: 404, message: 'device not found' },
      };
      await hooks.run('tunnel.admit', asked);
      const { admission } = asked;
      if (!admission.ok) {
        return {
          ok: false,
          status: admission.status,
          body: {
            message: admission.message,
            ...(admission.deviceStatus ? { status: admission.deviceStatus } : {}),
          },
        };
      }
      // A device token alone (leaked, or issued before agent protocol 2) opens no tunnel: the agent proves here,
      // for this tunnel, that it holds the device key, so no impostor's tunnel can replace the device's real one.
      const refusal = await checkTunnelProof(req, device.uid, admission.publicKey, protocol);
      if (refusal) return { ok: false, status: refusal.status, body: { message: refusal.message } };
      return { ok: true, id: device.uid, kinds: streamKinds(req.headers[STREAM_KINDS_HEADER]) };
    },
    online: (uid, remoteAddr) => hooks.run('tunnel.online', { uid, remoteAddr }),
    offline: (uids) => hooks.run('tunnel.offline', { uids }),
    alive: (uids) => hooks.run('tunnel.alive', { uids }),
  };
}
