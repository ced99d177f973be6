import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { secretsEqual } from '@gatehouse/core';
import type { PeerAdmission, TunnelPeers } from '@gatehouse/plugin-community';
import type { Knex } from 'knex';
import { Connector } from './model';

export const CONNECTOR_CONNECTION_PATH = '/connector/connection';
/** On the internal listener: another instance asks for a stream to a connector whose tunnel is here. */
export const CONNECTOR_FORWARD_PATH = '/internal/connector-stream';
/** The engine the connector says it serves (`unix:///path` or `tcp://host:port`), shown to its namespace. */
const ENGINE_HEADER = 'x-gatehouse-connector-engine';

/** A connector uid (UUID), a dot, then 32 random bytes in base64url. */
const TOKEN = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.([A-Za-z0-9_-]{43})$/;

/** A new token for the connector, and what the store keeps of it (the SHA-256 of its secret, never the secret). */
export function newConnectorToken(uid: string): { token: string; hash: string } {
  const secret = randomBytes(32).toString('base64url');
  return { token: `${uid}.${secret}`, hash: tokenHash(secret) };
}

function tokenHash(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Where the engine is, as the connector reported it: a Unix socket's path (port 0), or a TCP host and port. */
export function reportedEngine(header: string | string[] | undefined): { address: string; port: number } {
  const text = typeof header === 'string' ? header : '';
  const unix = /^unix:\/\/(\/[\x21-\x7e]{1,200})$/.exec(text);
  if (unix?.[1]) return { address: unix[1], port: 0 };
  const tcp = /^tcp:\/\/\[?([A-Za-z0-9.:-]{1,253}?)\]?:(\d{1,5})$/.exec(text);
  if (tcp?.[1] && tcp[2] && Number(tcp[2]) <= 65535) return { address: tcp[1], port: Number(tcp[2]) };
  return { address: '', port: 0 };
}

/**
 * Connectors as tunnel peers: a connector dials `/connector/connection` with its token (`Authorization: Bearer
 * <uid>.<secret>`), which names one connector of one namespace. The secret is compared with the stored hash in
 * constant time; a rotated token or a deleted connector refuses it. What the connector says of its engine is kept
 * as the connector's address and port, for its namespace to see.
 */
export function connectorPeers(deps: {
  db: Knex;
  online(uid: string, remoteAddr: string): Promise<void>;
  offline(uids: string[]): Promise<void>;
}): TunnelPeers {
  const refused: PeerAdmission = {
    ok: false,
    status: 401,
    body: { message: 'missing or malformed connector token' },
  };
  return {
    name: 'connector',
    path: CONNECTOR_CONNECTION_PATH,
    forwardPath: CONNECTOR_FORWARD_PATH,
    async admit(req: IncomingMessage): Promise<PeerAdmission> {
      const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? '';
      const match = TOKEN.exec(bearer);
      if (!match?.[1] || !match[2]) return refused;
      const uid = match[1];
      // A look-up by the connector's globally unique uid: the token names the tenant.
      const row = await Connector.acrossTenants(deps.db).findById(uid).select('uid', 'token_hash');
      if (!row?.token_hash || !secretsEqual(row.token_hash, tokenHash(match[2]))) return refused;
      const engine = reportedEngine(req.headers[ENGINE_HEADER]);
      await Connector.acrossTenants(deps.db)
        .findById(uid)
        .patch({ address: engine.address, port: engine.port });
      return { ok: true, id: uid, kinds: [] };
    },
    online: (uid, remoteAddr) => deps.online(uid, remoteAddr),
    offline: (uids) => deps.offline(uids),
    // A connector's liveness is its engine's event stream; the watcher reports it.
    alive: async () => {},
  };
}
