import { createPrivateKey, randomUUID, X509Certificate } from 'node:crypto';
import {
  FailedDependency,
  Invalid,
  listPage,
  NotFound,
  type Page,
  type SealedColumn,
  type SecretBox,
  type TenantStore,
} from '@gatehouse/core';
import { Device, type TunnelHub } from '@gatehouse/plugin-community';
import type { Static } from '@sinclair/typebox';
import {
  type EngineLink,
  type EngineTls,
  engineClient,
  engineError,
  engineInfo,
  probeEngine,
  STATUS,
} from './engine';
import { Connector, ConnectorContainer } from './model';
import type { ConnectorView, ConnectorWithToken, connectorCreate, connectorUpdate } from './schemas';
import { newConnectorToken } from './tunnel';

/** The TLS material of every connector, sealed with the operator's key. */
export const CONNECTOR_TLS: SealedColumn = { table: 'connectors', column: 'tls', key: 'uid' };

/** What the connectors' watchers need to hear from the API: a connector was made, changed or deleted. */
export interface ConnectorChanges {
  changed(uid: string): Promise<void>;
}

/** How the server reaches the connector's engine: through its tunnel, in TLS when the connector is secure. */
export function connectorLink(row: Connector, secrets: SecretBox, tunnels: TunnelHub): EngineLink {
  return {
    line: () => tunnels.open(row.uid, { kind: 'engine' }),
    secure: row.secure,
    tls: openTls(row, secrets),
    // A Unix socket has no name to check a certificate against: the engine's certificate then names localhost.
    host: row.port === 0 || !row.address ? 'localhost' : row.address,
  };
}

function openTls(row: Connector, secrets: SecretBox): EngineTls {
  return row.tls ? (JSON.parse(secrets.open(row.tls, CONNECTOR_TLS, row.uid)) as EngineTls) : {};
}

/**
 * The `/api/connector` calls: connectors to container engines of the caller's namespace (request scope, through
 * the tenant store). A connector is reached only through its own process's tunnel; a write asks the engine through
 * it at once when it is connected, and the answer is 200 when the engine answered and 201 when the connector was
 * saved without it.
 */
export class ConnectorService {
  private readonly tenant: TenantStore;
  private readonly secrets: SecretBox;
  private readonly watchers: ConnectorChanges;
  private readonly tunnels: TunnelHub;

  constructor(deps: {
    tenant: TenantStore;
    secrets: SecretBox;
    connectorWatchers: ConnectorChanges;
    connectorTunnels: TunnelHub;
  }) {
    this.tenant = deps.tenant;
    this.secrets = deps.secrets;
    this.watchers = deps.connectorWatchers;
    this.tunnels = deps.connectorTunnels;
  }

  async list(query: { enable?: boolean; page: number; per_page: number }): Promise<Page<ConnectorView>> {
    const qb = this.tenant.query(Connector);
    if (query.enable !== undefined) qb.where('enable', query.enable);
    const page = await listPage<Connector>(qb, query, { column: 'created_at', direction: 'desc' });
    return { items: page.items.map((r) => this.view(r)), total: page.total };
  }

  async get(uid: string): Promise<ConnectorView> {
    return this.view(await this.row(uid));
  }

  /** Saves the connector and makes its token; no process holds the token yet, so it is not connected. */
  async create(body: Static<typeof connectorCreate>): Promise<ConnectorWithToken> {
    const tls = checkTls(body.tls ?? {});
    const uid = randomUUID();
    const { token, hash } = newConnectorToken(uid);
    await this.tenant.query(Connector).insert({
      uid,
      enable: body.enable ?? true,
      address: '',
      port: 0,
      secure: body.secure ?? false,
      tls: this.sealTls(tls, uid),
      token_hash: hash,
      status_state: 'disconnected',
      status_message: STATUS.waiting,
    });
    return { ...(await this.get(uid)), token };
  }

  async update(
    uid: string,
    body: Static<typeof connectorUpdate>,
  ): Promise<{ connector: ConnectorView; connected: boolean }> {
    const row = await this.row(uid);
    const tls = body.tls === undefined ? openTls(row, this.secrets) : checkTls(body.tls ?? {});
    await this.tenant
      .query(Connector)
      .where({ uid })
      .patch({
        enable: body.enable ?? row.enable,
        secure: body.secure ?? row.secure,
        ...(body.tls !== undefined ? { tls: this.sealTls(tls, uid) } : {}),
        updated_at: new Date(),
      });
    const updated = await this.row(uid);
    let connected = false;
    if (await this.tunnels.reachable(uid)) {
      const status = await probeEngine(engineClient(connectorLink(updated, this.secrets, this.tunnels)));
      connected = status.State === 'connected';
      await this.tenant
        .query(Connector)
        .where({ uid })
        .patch({ status_state: status.State, status_message: status.Message });
    }
    await this.watchers.changed(uid);
    return { connector: await this.get(uid), connected };
  }

  /** A new token: the old one is refused from now on, and a process connected with it is disconnected. */
  async rotateToken(uid: string): Promise<string> {
    await this.row(uid);
    const { token, hash } = newConnectorToken(uid);
    await this.tenant.query(Connector).where({ uid }).patch({ token_hash: hash, updated_at: new Date() });
    this.tunnels.disconnect(uid);
    return token;
  }

  /** Deletes the connector; its containers stop being devices (accepted ones keep their slot, as removed). */
  async remove(uid: string): Promise<void> {
    await this.row(uid);
    await this.tenant.transaction(async (store, trx) => {
      const devices = () =>
        ConnectorContainer.bindKnex(trx).query().where({ connector_uid: uid }).select('device_uid');
      // An accepted container keeps its slot for the removal window, as any removed device does.
      await store
        .query(Device)
        .whereIn('uid', devices())
        .where('status', 'accepted')
        .patch({ status: 'removed', status_update_at: new Date(), removed_at: new Date(), connected: false });
      await store.query(Device).whereIn('uid', devices()).whereNot('status', 'removed').delete();
      await store.query(Connector).where({ uid }).delete();
    });
    this.tunnels.disconnect(uid);
    await this.watchers.changed(uid);
  }

  /** `GET /api/connector/{uid}/info`: the engine's information object; 424 when it cannot be had. */
  async info(uid: string): Promise<Record<string, unknown>> {
    const row = await this.row(uid);
    if (!(await this.tunnels.reachable(uid))) throw new FailedDependency(STATUS.offline);
    try {
      return await engineInfo(engineClient(connectorLink(row, this.secrets, this.tunnels)));
    } catch (err) {
      throw new FailedDependency(engineError(err));
    }
  }

  private async row(uid: string): Promise<Connector> {
    const row = await this.tenant.query(Connector).findById(uid);
    if (!row) throw new NotFound('connector');
    return row;
  }

  private sealTls(tls: EngineTls, uid: string): string | null {
    return tls.ca || tls.cert || tls.key ? this.secrets.seal(JSON.stringify(tls), CONNECTOR_TLS, uid) : null;
  }

  private view(row: Connector): ConnectorView {
    const tls = openTls(row, this.secrets);
    return {
      uid: row.uid,
      tenant_id: row.tenant_id,
      enable: row.enable,
      address: row.address,
      port: row.port,
      secure: row.secure,
      status: { State: row.status_state, Message: row.status_message },
      tls: { ...(tls.ca ? { ca: tls.ca } : {}), ...(tls.cert ? { cert: tls.cert } : {}) },
      created_at: new Date(row.created_at).toISOString(),
    };
  }
}

/**
 * TLS material is read before it is kept: each PEM must parse, and a client certificate comes with its key and
 * must match it. Anything else is a 400 naming the part.
 */
function checkTls(tls: EngineTls): EngineTls {
  const bad: string[] = [];
  if (tls.ca) {
    try {
      new X509Certificate(tls.ca);
    } catch {
      bad.push('tls.ca');
    }
  }
  if (Boolean(tls.cert) !== Boolean(tls.key)) bad.push(tls.cert ? 'tls.key' : 'tls.cert');
  else if (tls.cert && tls.key) {
    try {
      const cert = new X509Certificate(tls.cert);
      try {
        if (!cert.checkPrivateKey(createPrivateKey(tls.key))) bad.push('tls.key');
      } catch {
        bad.push('tls.key');
      }
    } catch {
      bad.push('tls.cert');
    }
  }
  if (bad.length) throw new Invalid(bad);
  return {
    ...(tls.ca ? { ca: tls.ca } : {}),
    ...(tls.cert ? { cert: tls.cert } : {}),
    ...(tls.key ? { key: tls.key } : {}),
  };
}
