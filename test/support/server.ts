import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Kernel, LogDestination, PluginManifest } from '@gatehouse/core';
import { createKernel } from '@gatehouse/server';
import knex from 'knex';
import pg from 'pg';
import { coreMigrations, migrateLatest, migrationFiles } from '../../core/store/migrate';
import { setupSignature } from '../../plugins/community/setup/signature';

/**
 * A real Gatehouse server for a test file. The store is a fresh database on the PostgreSQL of TEST_DATABASE_URL
 * (created here, dropped on stop), or an in-memory PGlite when that is unset. HTTP and SSH bind port 0.
 */
export interface TestServer {
  kernel: Kernel;
  url: string;
  sshPort: number;
  dataDir: string;
  databaseUrl: string | undefined;
  /** The Redis key prefix this server uses (another instance sharing its store uses the same). */
  redisPrefix: string;
  api(method: string, path: string, opts?: ApiOptions): Promise<ApiAnswer>;
  /** Runs first-run setup and signs in; returns the login answer (token, tenant...). */
  setup(user?: Partial<NewUser>): Promise<LoginAnswer>;
  login(username: string, password: string): Promise<LoginAnswer>;
  stop(): Promise<void>;
}

export interface ApiOptions {
  body?: unknown;
  /** Sent as-is (for malformed JSON tests). */
  raw?: string;
  token?: string;
  apiKey?: string;
  headers?: Record<string, string>;
}

export interface ApiAnswer<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface NewUser {
  name: string;
  username: string;
  email: string;
  password: string;
}

export interface LoginAnswer {
  token: string;
  id: string;
  user: string;
  tenant: string;
  role: string;
  [k: string]: unknown;
}

export const defaultUser: NewUser = {
  name: 'Ada Admin',
  username: 'ada',
  email: 'ada@example.com',
  password: 'correct-horse',
};

export async function startServer(
  opts: {
    edition?: string;
    overrides?: Record<string, unknown>;
    ssh?: boolean;
    extraPlugins?: PluginManifest[];
    /** Environment the configuration is read from (e.g. GATEHOUSE_CONFIG naming a custom plugin list); none by default. */
    env?: NodeJS.ProcessEnv;
    /**
     * Another instance of the same installation (see docs/content/developers/architecture.md): this server uses that one's database and
     * Redis key space, and leaves dropping the database to it. Needs TEST_DATABASE_URL (PGlite is in-process).
     */
    sharing?: TestServer;
    /**
     * Keeps the server's log at this level in this destination (the gateway tests keep the last lines, to say what
     * a hung sign-in was doing); TEST_LOG_LEVEL, when set, sends every server's log to standard output instead.
     */
    logs?: { level: string; destination: LogDestination };
  } = {},
): Promise<TestServer> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gatehouse-test-'));
  if (opts.sharing && !opts.sharing.databaseUrl) throw new Error('sharing a store needs TEST_DATABASE_URL');
  const databaseUrl = opts.sharing ? opts.sharing.databaseUrl : await migratedDatabase();
  const redisPrefix = opts.sharing?.redisPrefix ?? `gatehouse-test-${randomBytes(6).toString('hex')}:`;
  const kernel = await createKernel({
    env: opts.env ?? {},
    memoryDb: !databaseUrl,
    ssh: opts.ssh ?? true,
    extraPlugins: opts.extraPlugins ?? [],
    ...(opts.logs && !process.env.TEST_LOG_LEVEL ? { logDestination: opts.logs.destination } : {}),
    overrides: {
      edition: opts.edition ?? 'community',
      dataDir,
      // A test's own http or ssh settings are added to port 0 on loopback, never in place of it: a shallow merge put
      // such servers on the default ports of every interface, where a running `npm start` made them fail.
      http: { port: 0, host: '127.0.0.1', ...(opts.overrides?.http as object | undefined) },
      ssh: { port: 0, host: '127.0.0.1', ...(opts.overrides?.ssh as object | undefined) },
      log: { level: process.env.TEST_LOG_LEVEL ?? opts.logs?.level ?? 'silent', pretty: false },
      ...(databaseUrl ? { database: { url: databaseUrl, poolMax: 5 } } : {}),
      // Each test server gets its own key space, so counters left by earlier runs or files never leak in.
      ...(process.env.TEST_REDIS_URL
        ? { redis: { url: process.env.TEST_REDIS_URL, keyPrefix: redisPrefix } }
        : {}),
      // One installation has one secret key (core/secrets.ts): another instance reads the first one's key file.
      ...(opts.sharing ? { secrets: { keyFile: path.join(opts.sharing.dataDir, 'secret.key') } } : {}),
      ...withoutListeners(opts.overrides),
    },
  });
  await kernel.start();
  const url = kernel.httpUrl;

  const api = apiAt(url);

  const login = async (username: string, password: string): Promise<LoginAnswer> => {
    const res = await api('POST', '/api/login', { body: { username, password } });
    if (res.status !== 200)
      throw new Error(`login as ${username} answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body as LoginAnswer;
  };

  return {
    kernel,
    url,
    sshPort: kernel.sshPort,
    dataDir,
    databaseUrl,
    redisPrefix,
    api,
    login,
    async setup(user = {}) {
      const u = { ...defaultUser, ...user };
      const sign = setupSignature(kernel.container.cradle.keys);
      const res = await api('POST', `/api/setup?sign=${sign}`, { body: u });
      if (res.status !== 200) throw new Error(`setup answered ${res.status}: ${JSON.stringify(res.body)}`);
      return login(u.username, u.password);
    },
    async stop() {
      await kernel.stop();
      if (!opts.sharing) await dropDatabase(databaseUrl);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The test API client of a server at `url` (this file's servers, or one in its own process). */
export function apiAt(url: string): TestServer['api'] {
  return async (method: string, p: string, o: ApiOptions = {}): Promise<ApiAnswer> => {
    const headers: Record<string, string> = { ...o.headers };
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    if (o.apiKey) headers['x-api-key'] = o.apiKey;
    let body: string | undefined;
    if (o.raw !== undefined) body = o.raw;
    else if (o.body !== undefined) body = JSON.stringify(o.body);
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    const res = await fetch(url + p, { method, headers, body });
    // A stream (the console's event stream) never ends on its own: its status and headers are the answer, and
    // the connection is closed, as a client that stops listening closes it.
    if (res.headers.get('content-type')?.startsWith('text/event-stream')) {
      await res.body?.cancel();
      return { status: res.status, body: undefined, headers: res.headers };
    }
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, body: parsed, headers: res.headers };
  };
}

/** A new empty database on TEST_DATABASE_URL's server, or undefined to use PGlite. */
function withoutListeners(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const { http: _http, ssh: _ssh, ...rest } = overrides;
  return rest;
}

export async function freshDatabase(): Promise<string | undefined> {
  const base = process.env.TEST_DATABASE_URL;
  if (!base) return undefined;
  const name = `gatehouse_test_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  try {
    await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
  const u = new URL(base);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * A test server's database: a fresh one copied from a template that holds the community edition's migrations,
 * made once per set of migration files. A server's boot then applies none of them (0.5 to 1 s less each, for
 * hundreds of servers a run); servers of other editions apply their own on top. Tests of the migrations themselves
 * start from `freshDatabase`.
 */
export async function migratedDatabase(): Promise<string | undefined> {
  const base = process.env.TEST_DATABASE_URL;
  if (!base) return undefined;
  const name = `gatehouse_test_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  try {
    for (let attempt = 0; ; attempt++) {
      const template = await ensureTemplate(base);
      try {
        await client.query(`create database ${name} template ${template}`);
        break;
      } catch (error) {
        if (attempt >= 50) throw error;
        // PostgreSQL refuses a copy while the template is being read: copies are made one at a time.
        if (/being accessed by other users/.test(String(error)))
          await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
        // Dropped as stale by a run of other migration files: made again.
        else if (/does not exist/.test(String(error))) forgetTemplate();
        else throw error;
      }
    }
  } finally {
    await client.end();
  }
  return withDatabase(base, name);
}

function withDatabase(base: string, name: string): string {
  const u = new URL(base);
  u.pathname = `/${name}`;
  return u.toString();
}

const repoRootDir = fileURLToPath(new URL('../../', import.meta.url));

const communityOwners = () => [
  coreMigrations,
  { name: 'community', dir: path.join(repoRootDir, 'plugins', 'community', 'migrations') },
];

/** The template's name: it changes with any migration file's name or content. */
function templateName(): string {
  const hash = createHash('sha256');
  for (const { name, file } of migrationFiles(communityOwners()))
    hash.update(name).update(readFileSync(file));
  return `gatehouse_tpl_${hash.digest('hex').slice(0, 16)}`;
}

let template: Promise<string> | undefined;
const forgetTemplate = () => {
  template = undefined;
};
/** Templates of other migration files are dropped once this old: another checkout may still be running on one. */
const STALE_TEMPLATE_MS = 24 * 60 * 60 * 1000;

/**
 * Makes the template when it is missing, under an advisory lock, as the servers of a run start in several processes
 * at once: migrated in a database of its own, then renamed, so a half-made template is never copied. Templates of
 * other migration files (earlier checkouts) are dropped a day after they were made.
 */
function ensureTemplate(base: string): Promise<string> {
  template ??= (async () => {
    const name = templateName();
    const client = new pg.Client({ connectionString: base });
    await client.connect();
    try {
      await client.query('select pg_advisory_lock(hashtext($1))', ['gatehouse-test-template']);
      const found = await client.query('select 1 from pg_database where datname = $1', [name]);
      if (found.rowCount) return name;
      // Each template says when it was made (its comment): those of other migration files are dropped a day on.
      const others = await client.query(
        `select datname, shobj_description(oid, 'pg_database') as made from pg_database
          where left(datname, 14) = 'gatehouse_tpl_' and right(datname, 9) <> '_building' and datname <> $1`,
        [name],
      );
      for (const row of others.rows as { datname: string; made: string | null }[])
        if (Date.now() - Number(row.made ?? 0) > STALE_TEMPLATE_MS)
          await client.query(`drop database if exists ${row.datname} with (force)`);
      const building = `${name}_building`;
      await client.query(`drop database if exists ${building} with (force)`);
      await client.query(`create database ${building}`);
      const db = knex({ client: 'pg', connection: withDatabase(base, building), pool: { min: 0, max: 1 } });
      try {
        await migrateLatest(db, communityOwners());
      } finally {
        await db.destroy();
      }
      await client.query(`comment on database ${building} is '${Date.now()}'`);
      await client.query(`alter database ${building} rename to ${name}`);
      return name;
    } finally {
      await client
        .query('select pg_advisory_unlock(hashtext($1))', ['gatehouse-test-template'])
        .catch(() => {});
      await client.end();
    }
  })();
  template.catch(() => {
    template = undefined;
  });
  return template;
}

export async function dropDatabase(url: string | undefined): Promise<void> {
  const base = process.env.TEST_DATABASE_URL;
  if (!url || !base) return;
  const name = new URL(url).pathname.slice(1);
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  try {
    await client.query(`drop database if exists ${name} with (force)`);
  } finally {
    await client.end();
  }
}
