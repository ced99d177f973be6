import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import {
  applyFilter,
  type Cache,
  type Config,
  Conflict,
  type FilterField,
  type FilterItem,
  Forbidden,
  fromDatabaseError,
  type Hooks,
  Invalid,
  listPage,
  NotFound,
  nullsWhere,
  type Page,
  PaymentRequired,
  parseFilter,
  SshPenalties,
  type TenantStore,
  type TokenService,
  TooManyRequests,
  Unauthorized,
} from '@gatehouse/core';
import {
  AGENT_PROTOCOL,
  checkProof,
  PROOF_WINDOW_SECONDS,
  protocolRefusal,
} from '@gatehouse/protocol/agent-proof';
import type { Static } from '@sinclair/typebox';
import type { Knex } from 'knex';
import { type QueryBuilder, raw } from 'objection';
import type { TunnelHub } from '../agent-tunnels/hub';
import type { ConsoleEvents } from '../events/service';
import type { InstallKeyCheck, InstallKeys } from '../installkeys/service';
import { Namespace, type NamespaceSettings } from '../namespaces/model';
import type { Stats } from '../stats/schemas';
import { Tunnel } from '../tunnels/model';
import type { AcceptanceWaits } from './acceptance';
import { Device, DeviceCount, type DeviceKind, DeviceTagCount } from './model';
import {
  CUSTOM_FIELD_KEY_PATTERN,
  type DeviceStatus,
  type DeviceView,
  type deviceAuthBody,
  type deviceUpdate,
  MAX_CUSTOM_FIELDS,
} from './schemas';

/** The device counts of `GET /api/stats`; its sessions feature adds the rest. */
type DeviceCounts = Omit<Stats, 'active_sessions'>;

/**
 * `/api/devices` lists what agents register, wherever they run (`info.platform` says docker or native, for
 * information only); `/api/containers` lists containers a container-engine connector exposes (none without one).
 */

export interface DeviceRow {
  uid: string;
  tenant_id: string;
  name: string;
  identity: { mac: string };
  info: { id: string; pretty_name: string; version: string; arch: string; platform: 'docker' | 'native' };
  kind: DeviceKind;
  public_key: string;
  hostname: string;
  status: DeviceStatus;
  status_update_at: Date;
  last_seen: Date;
  connected: boolean;
  remote_addr: string;
  tags: string[];
  custom_fields: Record<string, string>;
  public_url: boolean;
  removed_at: Date | null;
  created_at: Date;
  /** Computed: the tunnel is up and the last sign of life is recent. */
  online: boolean;
  /** Joined from namespaces. */
  namespace: string;
  /** Joined from namespaces: its device limit (-1: none), so a page needs no second look-up for it. */
  namespace_max_devices: number;
  /** Computed: an accepted device of the namespace with this identity and another key. */
  identity_conflict: { uid: string; name: string } | null;
}

/** What an availability call writes: the columns of `devices` it sets, as bound values. */
export type DeviceAuthValues = {
  tenant: string;
  uid: string;
  name: string;
  /** JSON text of `{mac}`. */
  identity: string;
  /** JSON text of the agent's info. */
  info: string;
  publicKey: string;
  hostname: string;
  remoteAddr: string;
};

/**
 * A new registration as its admission found it: the install key that vouches for it (null: none), and the source
 * and block of addresses it comes from.
 */
interface Admission {
  keyId: string | null;
  source: string;
  block: string;
}

/** What an agent whose install key does not admit its device is told. */
function installKeyRefusal(check: Exclude<InstallKeyCheck, { ok: true }>): string {
  if (check.reason === 'expired') return `the install key expired at ${check.detail}`;
  if (check.reason === 'used-up')
    return `the install key has registered the ${check.detail} devices it allows`;
  return 'the install key is not valid for this namespace: unknown, revoked or replaced by a rotation';
}

/** A removed device keeps its slot, and may come back, for 720 hours. */
export const REMOVED_WINDOW_HOURS = 720;
/** A device whose last sign of life (auth call or pong) is older than this is offline even with a tunnel. */
export const ONLINE_WINDOW_SECONDS = 120;

const sortColumns: Record<string, string> = {
  last_seen: 'devices.last_seen',
  name: 'devices.name',
  uid: 'devices.uid',
  created_at: 'devices.created_at',
  status: 'devices.status',
  online: 'devices.connected',
};
export const deviceSortFields = Object.keys(sortColumns);
/** Beside those, a list sorts by any custom field, `custom_fields.<key>`. */
export const customFieldSort = {
  pattern: `^custom_fields\\.${CUSTOM_FIELD_KEY_PATTERN}$`,
  description: 'Or custom_fields.<key>: by that custom field (devices without it first when ascending).',
};
const CUSTOM_FIELD_NAME = new RegExp(`^custom_fields\\.(${CUSTOM_FIELD_KEY_PATTERN})$`);

/**
 * What a list sorts by: a column, or a custom field's value with the devices that lack it as empty values, so they
 * come first ascending and last descending as the other columns' nulls do.
 */
function sortOrder(db: Knex, sortBy: string): string | Knex.Raw {
  const key = CUSTOM_FIELD_NAME.exec(sortBy)?.[1];
  if (key !== undefined) return db.raw(`coalesce(devices.custom_fields->>?, '')`, [key]);
  return sortColumns[sortBy] ?? 'devices.last_seen';
}

/** The filter fields of a list: the fixed ones and each custom field the filter names, as a string. */
function listFilterFields(filter: FilterItem[]): Record<string, FilterField> {
  const fields = { ...filterFields };
  for (const item of filter) {
    if (item.type !== 'property') continue;
    const key = CUSTOM_FIELD_NAME.exec(item.params.name)?.[1];
    if (key === undefined) continue;
    fields[item.params.name] = {
      column: 'devices.custom_fields',
      kind: 'string',
      sql: 'devices.custom_fields->>?',
      bindings: [key],
    };
  }
  return fields;
}

const filterFields: Record<string, FilterField> = {
  uid: { column: 'devices.uid', kind: 'string' },
  name: { column: 'devices.name', kind: 'string' },
  hostname: { column: 'devices.hostname', kind: 'string' },
  tags: { column: 'devices.tags', kind: 'array' },
  // What the API shows as online: a tunnel and a recent sign of life.
  online: {
    column: 'devices.connected',
    kind: 'boolean',
    sql: `devices.connected and devices.last_seen > now() - interval '${ONLINE_WINDOW_SECONDS} seconds'`,
  },
  'info.id': { column: 'devices.info', kind: 'string', sql: "devices.info->>'id'" },
  'info.pretty_name': { column: 'devices.info', kind: 'string', sql: "devices.info->>'pretty_name'" },
  status: { column: 'devices.status', kind: 'string' },
  remote_addr: { column: 'devices.remote_addr', kind: 'string' },
  last_seen: { column: 'devices.last_seen', kind: 'date' },
  created_at: { column: 'devices.created_at', kind: 'date' },
};

const conflicts = { devices_accepted_name_key: ['name'] };

/** The uid is stable for the same tenant, identity and public key, so an agent keeps its device across restarts. */
export function deviceUidFor(tenantId: string, mac: string, publicKey: string): string {
  return createHash('sha256').update(`${tenantId}|${mac.toLowerCase()}|${publicKey.trim()}`).digest('hex');
}

/** The name a new device gets: its hostname, else its MAC (colons become hyphens), as an RFC 1123 label. */
export function defaultDeviceName(hostname: string, mac: string): string {
  const clean = (s: string) =>
    s
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 63)
      .replace(/-+$/, '');
  return clean(hostname.split('.')[0] ?? '') || clean(mac) || 'device';
}

export interface DeviceListQuery {
  page: number;
  per_page: number;
  filter?: string;
  status: DeviceStatus;
  sort_by: string;
  order_by: 'asc' | 'desc';
}

/**
 * Devices as the agents and the SSH gateway reach them, before any namespace is established: agent registration and
 * the gateway's look-up (across namespaces, by name or uid). The namespace's own calls are `NamespaceDevices`.
 *
 * Agent registration stays plain knex on purpose: the availability call every agent makes every 30 seconds is one
 * UPSERT statement (with the namespace's name joined) that the model would split; it is the hot path
 * bench/RESULTS.md measures (agent auth p99), as is the registration of a new device under its advisory lock.
 */
export class DeviceService {
  private readonly db: Knex;
  private readonly tokens: TokenService;
  private readonly cache: Cache;
  private readonly config: Config;
  private readonly waits: AcceptanceWaits;
  private readonly installKeys: InstallKeys;
  private readonly events: ConsoleEvents;

  constructor(deps: {
    db: Knex;
    tokens: TokenService;
    acceptanceWaits: AcceptanceWaits;
    cache: Cache;
    config: Config;
    installKeys: InstallKeys;
    consoleEvents: ConsoleEvents;
  }) {
    this.events = deps.consoleEvents;
    this.db = deps.db;
    this.config = deps.config;
    this.tokens = deps.tokens;
    this.waits = deps.acceptanceWaits;
    this.cache = deps.cache;
    this.installKeys = deps.installKeys;
  }

  /**
   * `POST /api/devices/auth`: one UPSERT that registers a new device as pending or refreshes a known one (info,
   * address, last_seen), joined with its namespace. Unknown tenants insert nothing and answer 404.
   */
  async authenticate(
    body: Static<typeof deviceAuthBody>,
    remoteAddr: string,
    headers: IncomingHttpHeaders,
  ): Promise<{ uid: string; token: string; name: string; namespace: string }> {
    await this.checkPossession(body, headers);
    const uid = deviceUidFor(body.tenant_id, body.identity.mac, body.public_key);
    const info = {
      id: body.info.id,
      pretty_name: body.info.pretty_name,
      version: body.info.version,
      arch: body.info.arch,
      platform: body.info.platform,
    };
    const values: DeviceAuthValues = {
      tenant: body.tenant_id,
      uid,
      name: defaultDeviceName(body.hostname, body.identity.mac),
      identity: JSON.stringify({ mac: body.identity.mac }),
      info: JSON.stringify(info),
      publicKey: body.public_key.trim(),
      hostname: body.hostname.slice(0, 255),
      remoteAddr: remoteAddr.slice(0, 64),
    };
    const row = (await this.refresh(values)) ?? (await this.register(values, remoteAddr, body.install_key));
    // `ap`: issued after a proof of possession (agent protocol 2); device tokens without it are refused.
    const token = await this.tokens.sign({
      kind: 'device',
      sub: row.uid,
      tenant: body.tenant_id,
      ap: AGENT_PROTOCOL,
    });
    return { uid: row.uid, token, name: row.name, namespace: row.namespace };
  }

  /**
   * The availability call of a known device, as one statement: refreshes info, address and last_seen and joins its
   * namespace's name; undefined when the namespace has no such device, or has removed it (its return is a new
   * registration, with the same checks). Plain knex, not the Device model: bench/store/agent-upsert.ts measures
   * the model's two- and four-statement versions against it.
   */
  async refresh(
    values: DeviceAuthValues,
  ): Promise<{ uid: string; name: string; namespace: string } | undefined> {
    const result = await this.db.raw<{ rows: { uid: string; name: string; namespace: string }[] }>(
      // The availability call of a known device: one UPDATE. It need not wait for the WAL flush (the fsync was
      // most of this call's time): a crash loses at most the last moments of last_seen, and an agent whose
      // registration is lost repeats it in 30 s.
      `with durability as (select set_config('synchronous_commit', 'off', true)),
       up as (
         update devices set
           info = :info, hostname = :hostname, remote_addr = :remoteAddr, last_seen = now()
         where uid = :uid and tenant_id = :tenant and status <> 'removed'
         returning uid, name, tenant_id)
       select up.uid, up.name, ns.name as namespace from up join namespaces ns on ns.tenant_id = up.tenant_id,
         durability`,
      values,
    );
    return result.rows[0];
  }

  /**
   * A device the namespace does not know yet (or removed): bounded, since anyone with a tenant ID may call. A
   * registration carrying a valid install key of the namespace is trusted (`admission`); one without is counted
   * against its source and refused where the namespace requires a key. The pending queue is then shared
   * (`makeRoom`); the checks, the insert and the key's use hold the namespace's advisory lock, so parallel
   * registrations cannot overshoot a limit. See docs/content/self-hosted/security.md, "Device registration".
   */
  private async register(
    values: DeviceAuthValues,
    remoteAddr: string,
    installKey: string | undefined,
  ): Promise<{ uid: string; name: string; namespace: string }> {
    const ns = (await this.db('namespaces').where({ tenant_id: values.tenant }).first('name', 'settings')) as
      | { name: string; settings: NamespaceSettings | null }
      | undefined;
    if (!ns) throw new NotFound('namespace');
    const admitted = await this.admission(values.tenant, ns, remoteAddr, installKey);
    let evicted: string | undefined;
    let fresh = false;
    const row = await this.db.transaction(async (trx) => {
      await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [`devices:pending:${values.tenant}`]);
      const known = (await trx('devices').where({ uid: values.uid }).first('status', 'name')) as
        | { status: DeviceStatus; name: string }
        | undefined;
      // Registered by a parallel call of the same agent meanwhile: that is its availability call.
      if (known && known.status !== 'removed') {
        await trx('devices').where({ uid: values.uid }).update({ last_seen: trx.fn.now() });
        return { uid: values.uid, name: known.name, namespace: ns.name };
      }
      evicted = await this.makeRoom(trx, values.tenant, ns.name, admitted);
      if (admitted.keyId) {
        const use = await this.installKeys.use(trx, admitted.keyId);
        if (!use.ok) throw new Forbidden(installKeyRefusal(use));
      }
      const columns = {
        ...values,
        keyId: admitted.keyId,
        source: admitted.source.slice(0, 64),
        block: admitted.block.slice(0, 64),
      };
      // A removed device comes back pending; it keeps `removed_at`, and with it a slot it still holds.
      const written = await trx.raw<{ rows: { uid: string; name: string }[] }>(
        `insert into devices (uid, tenant_id, name, identity, info, kind, public_key, hostname, remote_addr,
           install_key_id, registration_source, registration_block)
         values (:uid, :tenant, :name, :identity, :info, 'device', :publicKey, :hostname, :remoteAddr,
           :keyId, :source, :block)
         on conflict (uid) do update set
           status = 'pending', status_update_at = now(), last_seen = now(), info = excluded.info,
           hostname = excluded.hostname, remote_addr = excluded.remote_addr,
           install_key_id = excluded.install_key_id, registration_source = excluded.registration_source,
           registration_block = excluded.registration_block
         returning uid, name`,
        columns,
      );
      const inserted = written.rows[0];
      if (!inserted) throw new NotFound('namespace');
      fresh = true;
      return { uid: inserted.uid, name: inserted.name, namespace: ns.name };
    });
    // An agent that made way and holds its acceptance wait hears at once, and registers again.
    if (evicted) {
      await this.waits.changed(evicted, 'removed');
      this.events.publish(values.tenant, { kind: 'device.status', device: evicted, status: 'removed' });
    }
    if (fresh)
      this.events.publish(values.tenant, { kind: 'device.status', device: row.uid, status: 'pending' });
    return row;
  }

  /**
   * Who a new registration is: trusted with a valid install key of the namespace (not counted against its source);
   * otherwise one more new device from its source, at most `limits.registrationsPerMinute` a minute (429), and
   * refused with 403 where the namespace requires a key. A key that is not valid is refused (403), never taken as
   * no key, and counts against its source, so guessing is as slow as registering.
   */
  private async admission(
    tenant: string,
    ns: { name: string; settings: NamespaceSettings | null },
    remoteAddr: string,
    installKey: string | undefined,
  ): Promise<Admission> {
    const source = SshPenalties.source(remoteAddr);
    const block = SshPenalties.block(remoteAddr);
    const check = installKey === undefined ? undefined : await this.installKeys.check(tenant, installKey);
    if (check?.ok) return { keyId: check.id, source, block };
    // The count lives 60 s after a source's last attempt: a source that keeps trying stays held back.
    const perMinute = this.config.limits.registrationsPerMinute;
    if ((await this.cache.incr(`devices:registrations:${source}`, 60)) > perMinute) {
      throw new TooManyRequests(
        `too many new devices registered from ${source}: at most ${perMinute} a minute; try again in 60 s`,
        { 'Retry-After': '60' },
      );
    }
    if (check) throw new Forbidden(installKeyRefusal(check));
    if (ns.settings?.require_install_key === true) {
      throw new Forbidden(
        `namespace ${ns.name} registers new devices only with an install key: set GATEHOUSE_INSTALL_KEY ` +
          '(--install-key) on the agent to a key an administrator made under Settings → Namespace → Install keys',
      );
    }
    return { keyId: null, source, block };
  }

  /**
   * A place in the namespace's pending queue (at most `limits.pendingDevices`), shared between sources: without an
   * install key, one source holds at most `limits.pendingPerSource` pending devices and one block of sources at
   * most `limits.pendingPerBlock` (429 beyond). When the queue is full, the oldest keyless registration of the
   * block that holds the most makes way for a registration with a key, or from a block that holds at least two
   * fewer; otherwise 429. The one that makes way is deleted and its uid answered, so that its agent is told.
   * Registrations with a key never make way. Runs under the namespace's advisory lock.
   */
  private async makeRoom(
    trx: Knex.Transaction,
    tenant: string,
    namespace: string,
    admitted: Admission,
  ): Promise<string | undefined> {
    const keyless = () =>
      trx('devices')
        .where({ tenant_id: tenant, status: 'pending', kind: 'device' })
        .whereNull('install_key_id');
    let fromBlock = 0;
    if (!admitted.keyId) {
      const [held] = (await keyless().select(
        trx.raw('count(*) filter (where registration_source = ?)::int as source', [admitted.source]),
        trx.raw('count(*) filter (where registration_block = ?)::int as block', [admitted.block]),
      )) as { source: number; block: number }[];
      const { pendingPerSource, pendingPerBlock } = this.config.limits;
      const advice = 'accept or reject some first, or register them with an install key';
      if ((held?.source ?? 0) >= pendingPerSource) {
        throw new TooManyRequests(
          `${admitted.source} already holds ${pendingPerSource} pending devices of namespace ${namespace}, the ` +
            `most one source may without an install key; ${advice}`,
          { 'Retry-After': '60' },
        );
      }
      if ((held?.block ?? 0) >= pendingPerBlock) {
        throw new TooManyRequests(
          `the addresses of ${admitted.block} already hold ${pendingPerBlock} pending devices of namespace ` +
            `${namespace}, the most one block may without an install key; ${advice}`,
          { 'Retry-After': '60' },
        );
      }
      fromBlock = held?.block ?? 0;
    }
    const cap = this.config.limits.pendingDevices;
    // The kept counts: exact under the lock, since every insert and status change updates them in its own
    // transaction.
    const [count] = (await trx('device_counts').where({ tenant_id: tenant }).sum({ n: 'pending' })) as {
      n: string | number | null;
    }[];
    if (Number(count?.n ?? 0) < cap) return undefined;
    const largest = (await keyless()
      .groupBy('registration_block')
      .select('registration_block', trx.raw('count(*)::int as n'), trx.raw('min(created_at) as oldest'))
      .orderBy([
        { column: 'n', order: 'desc' },
        { column: 'oldest', order: 'asc' },
      ])
      .first()) as { registration_block: string; n: number } | undefined;
    if (!largest || (!admitted.keyId && largest.n < fromBlock + 2)) {
      throw new TooManyRequests(
        `namespace ${namespace} already has ${cap} pending devices, the most it keeps waiting; accept, reject ` +
          'or remove some before more can register',
        { 'Retry-After': '60' },
      );
    }
    const victim = (await keyless()
      .where({ registration_block: largest.registration_block })
      .orderBy([{ column: 'created_at' }, { column: 'uid' }])
      .first('uid')) as { uid: string } | undefined;
    if (!victim) return undefined;
    await trx('devices').where({ uid: victim.uid }).delete();
    return victim.uid;
  }

  /**
   * The agent proves it holds the private key of `public_key` (agent/protocol.ts): a signature over this
   * registration's tenant, identity, key and hostname, a timestamp within the window and a nonce never seen
   * before. The presented key is the key on record: a device's uid is derived from its key, so another key is
   * another device, never this one. Agents of protocol 1 (no proof) get a 403 saying to update.
   */
  private async checkPossession(
    body: Static<typeof deviceAuthBody>,
    headers: IncomingHttpHeaders,
  ): Promise<void> {
    const check = checkProof(
      headers,
      {
        purpose: 'register',
        tenantId: body.tenant_id,
        mac: body.identity.mac,
        publicKey: body.public_key,
        hostname: body.hostname,
      },
      body.public_key,
    );
    if (!check.ok) {
      if (check.reason === 'protocol')
        throw new Forbidden(protocolRefusal(check.protocol, body.info.version));
      if (check.reason === 'key') throw new Invalid(['public_key']);
      throw new Unauthorized(
        `missing or malformed jwt or API token: device key proof refused, ${check.message}`,
      );
    }
    if (!(await this.cache.setIfAbsent(`agent-proof:${check.nonce}`, '1', 2 * PROOF_WINDOW_SECONDS))) {
      throw new Unauthorized(
        'missing or malformed jwt or API token: device key proof refused, it was used before',
      );
    }
  }

  /** The device the SSH gateway should reach: by `namespace.name` (accepted first) or by uid, in any namespace. */
  async findForSsh(
    target: { namespace: string; device: string } | { uid: string },
  ): Promise<(DeviceView & { kind: DeviceKind }) | undefined> {
    const q = withShown(Device.acrossTenants(this.db)).whereNot('devices.status', 'removed');
    if ('uid' in target) q.where('devices.uid', target.uid.toLowerCase());
    else {
      q.whereRaw('lower(namespace.name) = lower(?)', [target.namespace]).whereRaw(
        'lower(devices.name) = lower(?)',
        [target.device],
      );
    }
    const row = (await q.orderByRaw(`(devices.status = 'accepted') desc`).first()) as unknown as
      | DeviceRow
      | undefined;
    // The gateway reaches a container through its engine, not an agent: it needs to know which it is.
    return row ? { ...view(row, false), kind: row.kind } : undefined;
  }

  /** The device's status once it is no longer pending, or after `timeoutMs` (the agent's acceptance wait). */
  waitForAcceptance(tenantId: string, uid: string, timeoutMs: number, abort: AbortSignal): Promise<string> {
    return this.waits.wait(tenantId, uid, timeoutMs, abort);
  }
}

/**
 * The devices and containers of the caller's namespace (request scope): the lists and per-device calls and the
 * acceptance rules (the namespace's device limit). Every read and write goes through the scope's tenant store.
 */
export class NamespaceDevices {
  private readonly tenant: TenantStore;
  private readonly hooks: Hooks;
  private readonly hub: TunnelHub;
  private readonly waits: AcceptanceWaits;
  private readonly events: ConsoleEvents;

  constructor(deps: {
    tenant: TenantStore;
    hooks: Hooks;
    tunnelHub: TunnelHub;
    acceptanceWaits: AcceptanceWaits;
    consoleEvents: ConsoleEvents;
  }) {
    this.events = deps.consoleEvents;
    this.tenant = deps.tenant;
    this.hooks = deps.hooks;
    this.hub = deps.tunnelHub;
    this.waits = deps.acceptanceWaits;
  }

  /**
   * One page of the namespace's devices of `kind`. The total and the page's uids come from the devices table alone
   * (every filter and sort column is its own), and only the page's rows are read with what the API shows beside
   * them (the namespace's name, online, an identity conflict): on a namespace of 100,000 devices the join and the
   * wide rows were a third of the call (bench/RESULTS.md, "Device list").
   */
  async list(kind: DeviceKind, query: DeviceListQuery): Promise<Page<DeviceView>> {
    const filter = parseFilter(query.filter);
    const matching = this.tenant
      .query(Device)
      .where('devices.kind', kind)
      .where('devices.status', query.status);
    applyFilter(matching as never, filter, listFilterFields(filter));
    // Where a kept count answers the total, it is read while the page is.
    const kept = keptTotal(this.tenant, kind, query.status, filter);
    const order = { column: sortOrder(this.tenant.db, query.sort_by), direction: query.order_by };
    // One statement for the page: its uids, in order and limited, are a subquery of the read of the shown rows,
    // which sorts its few rows the same way again. Of rows with one sort value, the subquery decides which are on
    // the page and the uid their order within it.
    const page = await listPage(matching.select('devices.uid'), query, order, kept, (uids) =>
      withShown(this.tenant.query(Device))
        .whereIn('devices.uid', uids as QueryBuilder<Device>)
        .orderBy(order.column, order.direction, nullsWhere(order.direction))
        .orderBy('devices.uid'),
    );
    const shown = page.items as unknown as DeviceRow[];
    if (shown.length === 0) return { items: [], total: page.total };
    const limit = await namespaceLimit(this.tenant, shown[0]?.namespace_max_devices);
    return { items: shown.map((row) => view(row, acceptable(row, limit))), total: page.total };
  }

  /**
   * The operating systems of the namespace's devices of `kind` and `status` (info.id and pretty name), with how many
   * devices run each, most used first: the choices of the list's operating-system filter.
   */
  async operatingSystems(
    kind: DeviceKind,
    status: DeviceStatus,
  ): Promise<{ id: string; pretty_name: string; count: number }[]> {
    const rows = (await this.tenant
      .query(Device)
      .where('devices.kind', kind)
      .where('devices.status', status)
      .select(
        raw("devices.info->>'id' as id"),
        raw("devices.info->>'pretty_name' as pretty_name"),
        raw('count(*)::int as count'),
      )
      .groupByRaw("devices.info->>'id', devices.info->>'pretty_name'")
      .orderBy('count', 'desc')
      .orderBy('id')
      .limit(100)) as unknown as { id: string | null; pretty_name: string | null; count: number }[];
    return rows.map((r) => ({ id: r.id ?? '', pretty_name: r.pretty_name ?? '', count: Number(r.count) }));
  }

  /**
   * The custom field keys the namespace's devices of `kind` and `status` hold, with how many hold each, most held
   * first (at most 100): the choices of the list's custom field column and filter.
   */
  async customFieldKeys(kind: DeviceKind, status: DeviceStatus): Promise<{ key: string; count: number }[]> {
    const rows = (await this.tenant
      .query(Device)
      .where('devices.kind', kind)
      .where('devices.status', status)
      .crossJoin(raw('jsonb_object_keys(devices.custom_fields) as k (key)'))
      .select(raw('k.key as key'), raw('count(*)::int as count'))
      .groupBy('k.key')
      .orderBy('count', 'desc')
      .orderBy('k.key')
      .limit(100)) as unknown as { key: string; count: number }[];
    return rows.map((r) => ({ key: r.key, count: Number(r.count) }));
  }

  async get(kind: DeviceKind, uid: string): Promise<DeviceView> {
    const row = await this.row(kind, uid);
    return view(row, acceptable(row, await namespaceLimit(this.tenant, row.namespace_max_devices)));
  }

  async update(kind: DeviceKind, uid: string, changes: Static<typeof deviceUpdate>): Promise<DeviceView> {
    const row = await this.row(kind, uid);
    const patch: Partial<Device> = {};
    if (changes.public_url !== undefined) patch.public_url = changes.public_url;
    if (changes.name !== undefined && changes.name !== row.name) {
      const clash = await this.tenant
        .query(Device)
        .whereRaw('lower(name) = lower(?)', [changes.name])
        .whereNot('uid', uid)
        .whereNot('status', 'removed')
        .first()
        .select('uid');
      if (clash) throw new Conflict(['name']);
      patch.name = changes.name;
    }
    if (Object.keys(patch).length > 0) {
      try {
        await this.tenant.query(Device).findById(uid).patch(patch);
      } catch (err) {
        throw fromDatabaseError(err, conflicts);
      }
    }
    return this.get(kind, uid);
  }

  /**
   * Sets one custom field (`PUT .../custom_fields/:key`): the same key and value again changes nothing. A key the
   * device does not hold yet is added only while it holds fewer than MAX_CUSTOM_FIELDS; the guard is in the update,
   * so two concurrent calls cannot add one too many.
   */
  async setCustomField(kind: DeviceKind, uid: string, key: string, value: string): Promise<void> {
    const set = await this.tenant
      .query(Device)
      .where({ uid, kind })
      .whereRaw(
        '(custom_fields -> ?::text is not null or (select count(*) from jsonb_object_keys(custom_fields)) < ?)',
        [key, MAX_CUSTOM_FIELDS],
      )
      .patch({
        custom_fields: raw('custom_fields || jsonb_build_object(?::text, ?::text)', [key, value]) as never,
      });
    if (set > 0) return;
    await this.row(kind, uid);
    throw new Invalid(['key'], `a device holds at most ${MAX_CUSTOM_FIELDS} custom fields`);
  }

  /** Removes one custom field (`DELETE .../custom_fields/:key`); a key the device does not hold is no error. */
  async removeCustomField(kind: DeviceKind, uid: string, key: string): Promise<void> {
    const removed = await this.tenant
      .query(Device)
      .where({ uid, kind })
      .patch({ custom_fields: raw('custom_fields - ?::text', [key]) as never });
    if (removed === 0) throw new NotFound(kind);
  }

  /** Soft delete: status removed. An accepted device keeps its slot for 720 hours. */
  async remove(kind: DeviceKind, uid: string): Promise<void> {
    const row = await this.row(kind, uid);
    if (row.status === 'removed') return;
    await this.tenant.transaction(async (tenant) => {
      await tenant
        .query(Device)
        .findById(uid)
        .patch({
          status: 'removed',
          status_update_at: raw('now()') as never,
          removed_at: row.status === 'accepted' ? (raw('now()') as never) : null,
          connected: false,
        });
      await tenant.query(Tunnel).where({ device_uid: uid }).delete();
    });
    this.hub.disconnect(uid);
    await this.waits.changed(uid, 'removed');
    this.statusChanged(uid, 'removed');
  }

  /** The consoles of the namespace hear the new status (docs/content/developers/event-stream.md). */
  private statusChanged(uid: string, status: string): void {
    this.events.publish(this.tenant.tenantId, { kind: 'device.status', device: uid, status });
  }

  /** `PATCH .../{uid}/{status}`: accept runs the acceptance rules; other statuses drop the tunnel at once. */
  async setStatus(
    kind: DeviceKind,
    uid: string,
    target: 'accept' | 'reject' | 'pending' | 'unused',
  ): Promise<DeviceView> {
    if (target === 'accept') return this.accept(kind, uid);
    const status = target === 'reject' ? 'rejected' : target;
    await this.row(kind, uid);
    await this.tenant
      .query(Device)
      .findById(uid)
      .patch({ status, status_update_at: raw('now()') as never, connected: false });
    this.hub.disconnect(uid);
    await this.waits.changed(uid, status);
    this.statusChanged(uid, status);
    return this.get(kind, uid);
  }

  /**
   * Acceptable unless the namespace limit (accepted plus recently removed devices) is reached;
   * at the limit only a device removed within 720 hours (it still holds its slot) comes back. A name taken by
   * another accepted device is a 409; `device.beforeAccept` may refuse with 402.
   */
  async accept(kind: DeviceKind, uid: string): Promise<DeviceView> {
    const tenantId = this.tenant.tenantId;
    const before = await this.row(kind, uid);
    if (before.status === 'accepted') return this.get(kind, uid);
    // Outside the transaction: a hook may query the store, and the embedded store has a single connection.
    await this.hooks.run('device.beforeAccept', { tenantId, uid });
    try {
      await this.tenant.transaction(async (tenant, trx) => {
        // Serialises acceptances in one namespace, so two at once cannot both take the last slot.
        const ns = await Namespace.bindKnex(tenant.db)
          .query(trx)
          .findById(tenantId)
          .forUpdate()
          .select('max_devices');
        if (!ns) throw new NotFound('namespace');
        const row = (await withShown(tenant.query(Device)).findById(uid)) as unknown as DeviceRow | undefined;
        if (!row || row.kind !== kind) throw new NotFound(kind);
        const used = await usage(tenant);
        if (!acceptable(row, { max: ns.max_devices, used })) {
          throw new PaymentRequired(
            `the namespace has reached its limit of ${ns.max_devices} devices (accepted plus removed in the ` +
              `last ${REMOVED_WINDOW_HOURS} hours)`,
            'device_limit_reached',
          );
        }
        const clash = await tenant
          .query(Device)
          .where('status', 'accepted')
          .whereRaw('lower(name) = lower(?)', [row.name])
          .whereNot('uid', uid)
          .first()
          .select('uid');
        if (clash) throw new Conflict(['name']);
        await tenant
          .query(Device)
          .findById(uid)
          .patch({ status: 'accepted', status_update_at: raw('now()') as never, removed_at: null });
      });
    } catch (err) {
      throw fromDatabaseError(err, conflicts);
    }
    // A pending agent holding GET /api/devices/auth/wait dials its tunnel now.
    await this.waits.changed(uid, 'accepted');
    this.statusChanged(uid, 'accepted');
    await this.hooks.run('device.accepted', { tenantId, uid });
    return this.get(kind, uid);
  }

  /** `GET /api/stats` device counts (devices and containers together); sessions are added by their feature. */
  async counts(): Promise<DeviceCounts> {
    const [row] = (await this.tenant
      .query(Device)
      .select(
        raw(`count(*) filter (where status = 'accepted')::int as registered_devices`),
        raw(
          `count(*) filter (where status = 'accepted' and connected and last_seen > now() - make_interval(secs => ?))::int as online_devices`,
          [ONLINE_WINDOW_SECONDS],
        ),
        raw(`count(*) filter (where status = 'pending')::int as pending_devices`),
        raw(`count(*) filter (where status = 'rejected')::int as rejected_devices`),
      )) as unknown as DeviceCounts[];
    return {
      registered_devices: row?.registered_devices ?? 0,
      online_devices: row?.online_devices ?? 0,
      pending_devices: row?.pending_devices ?? 0,
      rejected_devices: row?.rejected_devices ?? 0,
    };
  }

  /** A device of this namespace and kind, or 404 (another namespace's device is never reachable by id). */
  private async row(kind: DeviceKind, uid: string): Promise<DeviceRow> {
    const row = (await withShown(this.tenant.query(Device))
      .where('devices.uid', uid)
      .where('devices.kind', kind)
      .first()) as unknown as DeviceRow | undefined;
    if (!row) throw new NotFound(kind);
    return row;
  }
}

/**
 * Devices and containers of a namespace by uid, in one query plus the namespace limit, whatever their kind or
 * status: lists of other things that name devices (sessions) look theirs up per page, never per row.
 */
export async function deviceViews(tenant: TenantStore, uids: string[]): Promise<Map<string, DeviceView>> {
  const found = new Map<string, DeviceView>();
  if (uids.length === 0) return found;
  const rows = (await withShown(tenant.query(Device)).whereIn('devices.uid', [
    ...new Set(uids),
  ])) as unknown as DeviceRow[];
  if (rows.length === 0) return found;
  const limit = await namespaceLimit(tenant, rows[0]?.namespace_max_devices);
  for (const r of rows) found.set(r.uid, view(r, acceptable(r, limit)));
  return found;
}

/** A device as the API shows it: its namespace's name (the relation), whether it is online, an identity conflict. */
function withShown(q: QueryBuilder<Device>): QueryBuilder<Device> {
  return q.joinRelated('namespace').select(
    'devices.*',
    'namespace.name as namespace',
    'namespace.max_devices as namespace_max_devices',
    raw('(devices.connected and devices.last_seen > now() - make_interval(secs => ?)) as online', [
      ONLINE_WINDOW_SECONDS,
    ]),
    // Only for devices not accepted (a one-time filter for the others), and a device's uid comes from its key:
    // the same identity under another uid is the same identity with another key.
    raw(
      `(select json_build_object('uid', o.uid, 'name', o.name) from devices o
           where devices.status <> 'accepted' and o.tenant_id = devices.tenant_id and o.status = 'accepted'
             and o.uid <> devices.uid and o.identity->>'mac' = devices.identity->>'mac'
           limit 1) as identity_conflict`,
    ),
  );
}

/** How many devices of `kind` the namespace has in `status`, from the kept counts (`DeviceCount`). */
export async function keptCount(
  tenant: TenantStore,
  kind: DeviceKind,
  status: DeviceStatus,
): Promise<number> {
  const row = await tenant.query(DeviceCount).findById([tenant.tenantId, kind]).select(status);
  return row ? Number(row[status]) : 0;
}

/** How many devices of `kind` in `status` carry `tag`, from the kept counts (`DeviceTagCount`). */
async function keptTagCount(
  tenant: TenantStore,
  kind: DeviceKind,
  status: DeviceStatus,
  tag: string,
): Promise<number> {
  const row = await tenant.query(DeviceTagCount).findById([tenant.tenantId, kind, status, tag]).select('n');
  return row ? Number(row.n) : 0;
}

/**
 * A list's total from a kept count (one row) instead of counting the matching devices: unfiltered, or filtered by
 * exactly one `tags contains` (applyFilter has already checked its value). Undefined: the list counts.
 */
function keptTotal(
  tenant: TenantStore,
  kind: DeviceKind,
  status: DeviceStatus,
  filter: FilterItem[],
): Promise<number> | undefined {
  if (filter.length === 0) return keptCount(tenant, kind, status);
  const [item] = filter;
  if (filter.length !== 1 || item?.type !== 'property') return undefined;
  const { name, operator, value } = item.params;
  if (name !== 'tags' || operator !== 'contains' || typeof value !== 'string') return undefined;
  return keptTagCount(tenant, kind, status, value);
}

/**
 * The namespace's device limit (-1: none) and the slots in use. `knownMax` is the limit when the caller has already
 * read it with the namespace (`withShown` joins it).
 */
async function namespaceLimit(
  tenant: TenantStore,
  knownMax?: number,
): Promise<{ max: number; used: number }> {
  const max =
    knownMax ??
    (await Namespace.bindKnex(tenant.db).query(tenant.trx).findById(tenant.tenantId).select('max_devices'))
      ?.max_devices ??
    -1;
  return { max, used: max < 0 ? 0 : await usage(tenant) };
}

/** Slots in use: accepted devices plus devices removed within the window. */
export function usage(store: TenantStore): Promise<number> {
  return store
    .query(Device)
    .where((b) =>
      b
        .where('status', 'accepted')
        .orWhereRaw('removed_at > now() - make_interval(hours => ?)', [REMOVED_WINDOW_HOURS]),
    )
    .resultSize();
}

/** Whether a device may be accepted within a limit of `max` slots of which `used` are taken (-1: no limit). */
export function acceptable(
  row: Pick<DeviceRow, 'status' | 'removed_at'>,
  limit: { max: number; used: number },
): boolean {
  if (row.status === 'accepted') return false;
  if (limit.max < 0 || limit.used < limit.max) return true;
  const windowMs = REMOVED_WINDOW_HOURS * 3600 * 1000;
  return row.removed_at !== null && Date.now() - new Date(row.removed_at).getTime() < windowMs;
}

const iso = (d: Date | string) => new Date(d).toISOString();

export function view(row: DeviceRow, isAcceptable: boolean): DeviceView {
  return {
    uid: row.uid,
    name: row.name,
    identity: { mac: row.identity?.mac ?? '' },
    info: row.info,
    public_key: row.public_key,
    tenant_id: row.tenant_id,
    last_seen: iso(row.last_seen),
    online: row.online === true,
    namespace: row.namespace,
    status: row.status,
    status_update_at: iso(row.status_update_at),
    created_at: iso(row.created_at),
    remote_addr: row.remote_addr,
    // No geolocation database ships with Gatehouse; the field keeps the API's shape (zeros).
    position: { latitude: 0, longitude: 0 },
    tags: row.tags ?? [],
    custom_fields: row.custom_fields ?? {},
    public_url: row.public_url,
    acceptable: isAcceptable,
    identity_conflict: row.identity_conflict ?? null,
  };
}
