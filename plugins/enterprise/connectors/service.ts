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
import { Device } from '@gatehouse/plugin-community/devices/model';
import type { Static } from '@sinclair/typebox';
import {
  type EngineEndpoint,
  type EngineStatus,
  type EngineTls,
  engineClient,
  engineError,
  engineInfo,
  probeEngine,
} from './engine';
import { Connector, ConnectorContainer } from './model';
import type { connectorCreate, connectorUpdate } from './schemas';

/** The TLS material of every connector, sealed with the operator's key (core/secrets.ts). */
export const CONNECTOR_TLS: SealedColumn = { table: 'connectors', column: 'tls', key: 'uid' };

/** The Connector entity as the API answers it (SPEC.md section 3); the private key is never in it. */
export interface ConnectorView {
  uid: string;
  tenant_id: string;
  enable: boolean;
  address: string;
  port: number;
  secure: boolean;
  status: EngineStatus;
  tls: { ca?: string; cert?: string };
  created_at: string;
}

/** What the connectors' watchers need to hear from the API: a connector was made, changed or deleted. */
export interface ConnectorChanges {
  changed(uid: string): Promise<void>;
}

/** Where the connector's engine answers, with its TLS material opened. */
export function connectorEndpoint(row: Connector, secrets: SecretBox): EngineEndpoint {
  return { address: row.address, port: row.port, secure: row.secure, tls: openTls(row, secrets) };
}

function openTls(row: Connector, secrets: SecretBox): EngineTls {
  return row.tls ? (JSON.parse(secrets.open(row.tls, CONNECTOR_TLS, row.uid)) as EngineTls) : {};
}

/**
 * The `/api/connector` calls: connectors to container engines of the caller's namespace (request scope, through
 * the tenant store). A write tries the engine at once and keeps what it said as the status: the answer is 200 when
 * it connected and 201 when the connector was saved but the engine could not be reached (SPEC.md section 4).
 */
export class ConnectorService {
  private readonly tenant: TenantStore;
  private readonly secrets: SecretBox;
  private readonly watchers: ConnectorChanges;

  constructor(deps: { tenant: TenantStore; secrets: SecretBox; connectorWatchers: ConnectorChanges }) {
    this.tenant = deps.tenant;
    this.secrets = deps.secrets;
    this.watchers = deps.connectorWatchers;
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

  async create(
    body: Static<typeof connectorCreate>,
  ): Promise<{ connector: ConnectorView; connected: boolean }> {
    const tls = checkTls(body.tls ?? {});
    const uid = randomUUID();
    const secure = body.secure ?? false;
    const status = await probeEngine(engineClient({ address: body.address, port: body.port, secure, tls }));
    await this.tenant.query(Connector).insert({
      uid,
      enable: body.enable ?? true,
      address: body.address,
      port: body.port,
      secure,
      tls: this.sealTls(tls, uid),
      status_state: status.State,
      status_message: status.Message,
    });
    await this.watchers.changed(uid);
    return { connector: await this.get(uid), connected: status.State === 'connected' };
  }

  async update(
    uid: string,
    body: Static<typeof connectorUpdate>,
  ): Promise<{ connector: ConnectorView; connected: boolean }> {
    const row = await this.row(uid);
    const tls = body.tls === undefined ? openTls(row, this.secrets) : checkTls(body.tls ?? {});
    const endpoint: EngineEndpoint = {
      address: body.address ?? row.address,
      port: body.port ?? row.port,
      secure: body.secure ?? row.secure,
      tls,
    };
    const status = await probeEngine(engineClient(endpoint));
    await this.tenant
      .query(Connector)
      .where({ uid })
      .patch({
        enable: body.enable ?? row.enable,
        address: endpoint.address,
        port: endpoint.port,
        secure: endpoint.secure,
        ...(body.tls !== undefined ? { tls: this.sealTls(tls, uid) } : {}),
        status_state: status.State,
        status_message: status.Message,
        updated_at: new Date(),
      });
    await this.watchers.changed(uid);
    return { connector: await this.get(uid), connected: status.State === 'connected' };
  }

  /** Deletes the connector; its containers stop being devices (accepted ones keep their slot, as removed). */
  async remove(uid: string): Promise<void> {
    await this.row(uid);
    await this.tenant.transaction(async (store, trx) => {
      const devices = () =>
        ConnectorContainer.bindKnex(trx).query().where({ connector_uid: uid }).select('device_uid');
      // An accepted container keeps its slot for the removal window, as any removed device does (SPEC.md 4).
      await store
        .query(Device)
        .whereIn('uid', devices())
        .where('status', 'accepted')
        .patch({ status: 'removed', status_update_at: new Date(), removed_at: new Date(), connected: false });
      await store.query(Device).whereIn('uid', devices()).whereNot('status', 'removed').delete();
      await store.query(Connector).where({ uid }).delete();
    });
    await this.watchers.changed(uid);
  }

  /** `GET /api/connector/{uid}/info`: the engine's information object; 424 when the engine does not answer. */
  async info(uid: string): Promise<Record<string, unknown>> {
    const row = await this.row(uid);
    try {
      return await engineInfo(engineClient(connectorEndpoint(row, this.secrets)));
    } catch (err) {
      throw new FailedDependency(`the container engine did not answer: ${engineError(err)}`);
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
