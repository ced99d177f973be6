import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { authenticateDevice } from '@gatehouse/agent/registration';
import { type Role, roles } from '@gatehouse/core';
import type { RegisteredRoute } from '@gatehouse/core/http/route';
import { createKey, createTeam, type Team } from '../integration/accounts/team';
import { sampleParam } from '../integration/permissions/requests';
import { publicKeyData } from '../support/public-keys';
import { type LoginAnswer, startServer, type TestServer } from '../support/server';
import { startSmtp } from '../support/smtp';

/** One namespace of the world: a member of every role, an API key of every role, and one object of every kind. */
export interface Side {
  name: string;
  team: Team;
  /** API key secrets by role. */
  keys: Record<Role, string>;
  /** API key names by role (the `:key` of the key calls). */
  keyNames: Record<Role, string>;
  device: { uid: string; token: string };
  container: string;
  tag: string;
  fingerprint: string;
  rule: string;
  session: string;
  tunnel: string;
  /**
   * Objects of kinds the names above do not cover, made through the route table (see discover): the answer of
   * each create call, by the path of its collection.
   */
  created: Record<string, Record<string, unknown>>;
}

export interface World {
  server: TestServer;
  admin: LoginAnswer;
  a: Side;
  /** Not built when the file asked for A alone. */
  b: Side;
}

let macs = 0;

/** A tag name each side's device and firewall rule carry, besides a tag of its own. */
export const SHARED_TAG = 'shared-tag';

/** A device registered through the agent's own call, with a real key, accepted when `accept` is set. */
export async function registerDevice(
  server: TestServer,
  side: { tenant: string; ownerToken: string },
  opts: { platform?: 'native' | 'docker'; accept?: boolean; tag?: string } = {},
): Promise<{ uid: string; token: string }> {
  const n = ++macs;
  // The agent proves it holds the device key (agent protocol 2), so the device gets a whole key pair.
  const key = generateKeyPairSync('ed25519', {
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const answer = await authenticateDevice(
    new URL(server.url),
    {
      info: {
        id: 'debian',
        pretty_name: 'Debian GNU/Linux 12',
        version: '0.1.0',
        arch: 'amd64',
        platform: opts.platform ?? 'native',
      },
      sessions: [],
      hostname: `sec-${n}`,
      identity: {
        mac: `02:00:5e:00:${(n >> 8).toString(16).padStart(2, '0')}:${(n & 255).toString(16).padStart(2, '0')}`,
      },
      public_key: key.publicKey,
      tenant_id: side.tenant,
    },
    key.privateKey,
  );
  const base = opts.platform === 'docker' ? '/api/containers' : '/api/devices';
  if (opts.accept) {
    const res = await server.api('PATCH', `${base}/${answer.uid}/accept`, { token: side.ownerToken });
    if (res.status !== 200) throw new Error(`accept: ${res.status} ${JSON.stringify(res.body)}`);
  }
  if (opts.tag) {
    const res = await server.api('POST', `${base}/${answer.uid}/tags`, {
      token: side.ownerToken,
      body: { tag: opts.tag },
    });
    if (res.status !== 200) throw new Error(`tag: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return { uid: answer.uid, token: answer.token };
}

async function must(what: string, res: { status: number; body: unknown }, ok = [200]) {
  if (!ok.includes(res.status)) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Record<string, unknown>;
}

/** A namespace with members of every role and one object of every kind the API manages. */
async function buildSide(server: TestServer, name: string): Promise<Side> {
  const team = await createTeam(server, name);
  const owner = team.tokens.owner;
  const keys = {} as Record<Role, string>;
  const keyNames = {} as Record<Role, string>;
  for (const role of roles) {
    keyNames[role] = `${name}-${role.slice(0, 5)}`;
    keys[role] = await createKey(server, owner, keyNames[role], role);
  }
  const tag = `${name}-tag`;
  const owned = { tenant: team.tenant, ownerToken: owner };
  const device = await registerDevice(server, owned, { accept: true, tag });
  // A tag both namespaces use: renaming or deleting it in one must leave the other's alone.
  await must(
    'shared tag',
    await server.api('POST', `/api/devices/${device.uid}/tags`, { token: owner, body: { tag: SHARED_TAG } }),
  );
  const container = (await registerDevice(server, owned, { platform: 'docker' })).uid;
  const key = await must(
    'public key',
    await server.api('POST', '/api/sshkeys/public-keys', {
      token: owner,
      body: {
        data: publicKeyData(name),
        filter: { hostname: '.*' },
        name: `${name}-key`,
        username: '.*',
      },
    }),
  );
  const rule = await must(
    'firewall rule',
    await server.api('POST', '/api/firewall/rules', {
      token: owner,
      body: {
        action: 'deny',
        active: true,
        filter: { tags: [tag, SHARED_TAG] },
        priority: 7,
        source_ip: '.*',
        username: '.*',
      },
    }),
  );
  const tunnel = await must(
    'tunnel',
    await server.api('POST', `/api/devices/${device.uid}/tunnels`, {
      token: owner,
      body: { host: '127.0.0.1', port: 8080, ttl: -1 },
    }),
  );
  const session = await server.kernel.container.cradle.sessions.open({
    tenantId: team.tenant,
    deviceUid: device.uid,
    username: 'root',
    ip: '192.0.2.7',
    type: 'term',
    recorded: true,
  });
  await server.kernel.container.cradle.sessions.addRecords(team.tenant, session, [
    { seat: 0, message: `${name} secret output`, time: new Date(), width: 80, height: 24 },
  ]);
  const side: Side = {
    name,
    team,
    keys,
    keyNames,
    device,
    container,
    tag,
    fingerprint: String(key.fingerprint),
    rule: String(rule.id),
    session,
    tunnel: String(tunnel.address),
    created: {},
  };
  await discover(server, side);
  return side;
}

/**
 * The world the security files share: one server (no SSH listener), the first-run admin, and two namespaces A and B
 * built alike, so every call can be aimed from A at B's objects.
 */
export async function buildWorld(
  opts: { sides?: ('a' | 'b')[]; edition?: string; overrides?: Record<string, unknown> } = {},
): Promise<World> {
  const sides = opts.sides ?? ['a', 'b'];
  // The cloud mails its invitations (and refuses them without mail): its world gets a real SMTP server.
  const smtp = opts.edition === 'cloud' ? await startSmtp() : undefined;
  const overrides = { ...(smtp ? { smtp: { url: smtp.url } } : {}), ...opts.overrides };
  const server = await startServer({
    ssh: false,
    ...(opts.edition ? { edition: opts.edition } : {}),
    ...(Object.keys(overrides).length ? { overrides } : {}),
  });
  if (smtp) {
    const stopServer = server.stop;
    server.stop = async () => {
      await stopServer();
      await smtp.stop();
    };
  }
  const admin = await server.setup();
  // The two sides are independent: built at once, their password hashes share the machine's cores.
  const [a, b] = await Promise.all([
    buildSide(server, 'sec-a'),
    sides.includes('b') ? buildSide(server, 'sec-b') : (undefined as unknown as Side),
  ]);
  return { server, admin, a, b };
}

/**
 * The value of each path parameter of `route` that names `side`'s own object of that kind; parameters of a kind the
 * side has none of get a well-formed sample. Decided by the path and the parameter name, so a new route on an
 * existing resource is aimed at the right object without a line here.
 */
export function pathValues(route: Pick<RegisteredRoute, 'path'>, side: Side): Record<string, string> {
  const v: Record<string, string> = {};
  for (const [, name] of route.path.matchAll(/:([A-Za-z0-9_]+)/g)) {
    const param = name as string;
    v[param] =
      knownValue(route.path, param, side) ?? createdValue(route.path, param, side) ?? sampleParam(param);
  }
  return v;
}

/** The value naming `side`'s object for a parameter of a resource the world builds by hand. */
function knownValue(p: string, param: string, side: Side): string | undefined {
  switch (param) {
    case 'tenant':
      return side.team.tenant;
    case 'key':
      return side.keyNames.observer;
    case 'fingerprint':
      return side.fingerprint;
    case 'tag':
      return side.tag;
    case 'address':
      return side.tunnel;
    case 'seat':
      return '0';
    case 'status':
      return 'pending';
    case 'arch':
      return 'amd64';
    case 'uid':
    case 'id':
      if (p.startsWith('/api/containers/')) return side.container;
      if (p.startsWith('/api/devices/') || p.startsWith('/internal/devices/')) return side.device.uid;
      if (p.startsWith('/api/sessions/')) return side.session;
      if (p.startsWith('/api/firewall/rules/')) return side.rule;
      // Install keys are made by discover, through their create call.
      if (p.startsWith('/api/namespaces/install-keys/')) return undefined;
      if (p.startsWith('/api/namespaces/')) return side.team.ids.operator;
      if (p.startsWith('/api/user') || p.startsWith('/api/users/')) return side.team.ids.owner;
      return undefined;
    default:
      return undefined;
  }
}

/** The id of the object `discover` made in the collection the path continues, from the create call's answer. */
function createdValue(p: string, param: string, side: Side): string | undefined {
  const collection = Object.keys(side.created)
    .filter((c) => p.startsWith(`${c}/:${param}`))
    .sort((x, y) => y.length - x.length)[0];
  if (!collection) return undefined;
  const answer = side.created[collection] as Record<string, unknown>;
  const value = [answer[param], answer.id, answer.uid, answer.name].find((x) => typeof x === 'string');
  return value as string | undefined;
}

/**
 * Makes one object of every kind the names of Side do not cover, through the route table: each create call (a
 * POST with a body on a collection whose items have routes, `POST /api/x` beside `/api/x/:id`) is made by the
 * side's owner with a body its schema takes, and the answer kept. A new resource thus has an object in each
 * namespace, and the isolation matrix aims at it, without a line here. Calls that refuse the made-up body leave
 * nothing.
 */
async function discover(server: TestServer, side: Side): Promise<void> {
  const routes = server.kernel.routes;
  for (const r of routes) {
    if (r.method !== 'POST' || !r.schema.body || r.path.includes(':')) continue;
    const items = routes.filter((x) => x.path.startsWith(`${r.path}/:`));
    const params = [...new Set(items.map((x) => x.path.slice(r.path.length + 2).split('/')[0] as string))];
    if (!params.length || params.every((param) => knownValue(`${r.path}/:${param}`, param, side))) continue;
    const res = await server.api('POST', r.path, {
      token: side.team.tokens.owner,
      body: example(r.schema.body as Schema, 'body', side),
    });
    if (res.status < 300 && res.body && typeof res.body === 'object') side.created[r.path] = res.body;
  }
}

/** The route's path with its parameters filled from `values`. */
export function fill(route: Pick<RegisteredRoute, 'path'>, values: Record<string, string>): string {
  return route.path.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) =>
    encodeURIComponent(values[name] ?? sampleParam(name)),
  );
}

/** Well-formed values of `side` by field name, for bodies and parameters that name one of its objects. */
export function sideValues(side: Side): Record<string, string> {
  return {
    tenant: side.team.tenant,
    tenant_id: side.team.tenant,
    uid: side.device.uid,
    device: side.device.uid,
    fingerprint: side.fingerprint,
    tag: side.tag,
    address: side.tunnel,
    key: side.keyNames.observer,
    host: '127.0.0.1',
    seat: '0',
    status: 'pending',
    arch: 'amd64',
    role: 'observer',
  };
}

/** Strings that identify `side`'s rows wherever they are stored. */
export function markers(side: Side): string[] {
  return [
    side.team.tenant,
    ...Object.values(side.team.ids),
    side.device.uid,
    side.container,
    side.fingerprint,
    side.rule,
    side.session,
    side.tunnel,
    ...Object.values(side.created).flatMap((answer) =>
      [answer.id, answer.uid].filter((x): x is string => typeof x === 'string' && x.length >= 8),
    ),
  ];
}

/**
 * Every stored row that mentions one of `side`'s ids, in every table of the store (found from the catalogue, so a
 * new table is covered), as sorted JSON text: compare two snapshots to prove nothing of that side changed.
 */
export async function snapshot(server: TestServer, side: Side): Promise<string[]> {
  const db = server.kernel.container.cradle.db;
  const tables = (await db('information_schema.tables')
    .where({ table_schema: db.raw('current_schema()'), table_type: 'BASE TABLE' })
    .whereNotIn('table_name', ['knex_migrations', 'knex_migrations_lock'])
    .pluck('table_name')) as string[];
  const marks = markers(side);
  const rows: string[] = [];
  for (const table of tables.sort()) {
    const texts = (await db.raw(`select row_to_json(t)::text as j from ?? t`, [table])).rows as {
      j: string;
    }[];
    for (const { j } of texts) if (marks.some((m) => j.includes(m))) rows.push(`${table} ${j}`);
  }
  return rows.sort();
}

/** A random property name no schema has. */
export const strayName = () => `stray_${randomBytes(3).toString('hex')}`;

/** A JSON schema as the OpenAPI documents and TypeBox give it. */
export type Schema = Record<string, unknown> & {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
};

/** A value the schema takes, for the fields a request keeps well-formed while another one is attacked. */
/**
 * A value `schema` takes, naming `side`'s objects where a field names one (by field name: tenant_id, uid, tag...).
 * Objects get their required properties, and with `full` the optional ones of the top level too (a write that
 * changes something).
 */
export function example(schema: Schema | undefined, name: string, side: Side, full = false): unknown {
  if (!schema) return 'x';
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (schema.anyOf?.length) return example(schema.anyOf[0], name, side);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'integer':
    case 'number':
      return Math.max(Number(schema.minimum ?? 1), Math.min(Number(schema.maximum ?? 30), 30));
    case 'boolean':
      return true;
    case 'array': {
      const n = Number(schema.minItems ?? 1);
      return Array.from({ length: n }, (_, i) => {
        const v = example(schema.items, name, side);
        return typeof v === 'string' && n > 1 ? `${v}${i}` : v;
      });
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      const keys = full ? Object.keys(schema.properties ?? {}) : (schema.required ?? []);
      for (const key of keys) out[key] = example(schema.properties?.[key], key, side);
      return out;
    }
    default:
      return stringExample(schema, name, side);
  }
}

function stringExample(schema: Schema, name: string, side: Side): string {
  if (schema.format === 'email') return `fuzz-${name}@example.com`;
  if (schema.format === 'uuid')
    return name === 'tenant_id' || name === 'tenant' ? side.team.tenant : randomUUID();
  if (schema.format === 'date-time') return new Date().toISOString();
  const known = sideValues(side)[name];
  const candidates = [
    ...(known ? [known] : []),
    'fuzz-name',
    'fuzzname',
    '.*',
    'abcdef',
    '0'.repeat(64),
    '0'.repeat(24),
    '000000',
  ];
  const min = Number(schema.minLength ?? 0);
  const max = Number(schema.maxLength ?? 1e9);
  const pattern = typeof schema.pattern === 'string' ? new RegExp(schema.pattern, 'u') : undefined;
  return (
    candidates.find((c) => c.length >= min && c.length <= max && (!pattern || pattern.test(c))) ??
    'x'.repeat(Math.max(min, 1))
  );
}
