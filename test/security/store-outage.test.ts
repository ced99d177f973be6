import { expect } from 'chai';
import pg from 'pg';
import { dropDatabase, freshDatabase, startServer, type TestServer } from '../support/server';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';

/**
 * "Database trouble gives wrong answers", as a security review found: with PostgreSQL down, signed-in calls answered 401 (and the
 * console signed everyone out) and /info and login answered 500; with it frozen, /readyz hung over 45 s. Every
 * call that needs the store now answers 503 with a message, /readyz is bounded, and the server recovers by itself.
 * Each server here has a PostgreSQL database of its own, which the test takes away.
 */
const base = process.env.TEST_DATABASE_URL;

async function admin<T>(sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

function expectStoreDown(res: { status: number; body: unknown; headers: Headers }, what: string) {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).to.equal(503);
  expect(res.body).to.deep.equal({ message: 'the database is unavailable; try again in a moment' });
  expect(res.headers.get('retry-after')).to.equal('5');
}

/** Repeats `call` until it answers `status` (the server heals by itself), failing after `ms`. */
async function eventually(call: () => Promise<{ status: number }>, status: number, ms: number) {
  const until = Date.now() + ms;
  let last = 0;
  while (Date.now() < until) {
    last = (await call()).status;
    if (last === status) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`still answering ${last} after ${ms} ms`);
}

(base ? describe : describe.skip)(
  'security: PostgreSQL down or frozen (needs TEST_DATABASE_URL)',
  function () {
    this.timeout(120_000);

    describe('down: connections refused and cut', () => {
      let server: TestServer;
      let name: string;
      let token: string;
      before(async () => {
        server = await startServer({ ssh: false });
        name = new URL(server.databaseUrl as string).pathname.slice(1);
        token = (await server.setup()).token;
      });
      after(async () => {
        await admin(`alter database ${name} allow_connections true`).catch(() => {});
        await server?.stop();
      });

      it('answers 503 with a message to signed-in calls, /info, login and /readyz, then recovers', async () => {
        await admin(`alter database ${name} allow_connections false`);
        await admin('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [name]);

        expectStoreDown(await server.api('GET', '/api/auth/user', { token }), 'signed-in call');
        expectStoreDown(await server.api('GET', '/api/devices', { token }), 'signed-in list');
        expectStoreDown(await server.api('GET', '/info'), '/info');
        expectStoreDown(
          await server.api('POST', '/api/login', { body: { username: 'ada', password: 'correct-horse' } }),
          'login',
        );
        const ready = await server.api('GET', '/readyz');
        expect(ready.status).to.equal(503);
        expect(ready.body.message).to.be.a('string');
        expect((await server.api('GET', '/healthz')).status, 'the process itself is alive').to.equal(200);

        await admin(`alter database ${name} allow_connections true`);
        await eventually(() => server.api('GET', '/readyz'), 200, 15_000);
        await eventually(() => server.api('GET', '/api/auth/user', { token }), 200, 15_000);
        expect((await server.api('GET', '/info')).status).to.equal(200);
      });
    });

    describe('frozen: the connection hangs', () => {
      let server: TestServer;
      let proxy: TcpProxy;
      let database: string;
      let token: string;
      before(async () => {
        database = (await freshDatabase()) as string;
        const target = new URL(database);
        proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
        const through = new URL(database);
        through.host = `127.0.0.1:${proxy.port}`;
        server = await startServer({
          ssh: false,
          overrides: {
            database: { url: through.toString(), poolMax: 5, connectTimeout: 2, queryTimeout: 3 },
          },
        });
        token = (await server.setup()).token;
      });
      after(async () => {
        proxy?.thaw();
        await server?.stop();
        await proxy?.close();
        await dropDatabase(database);
      });

      it('answers a signed-in call 503 within the query timeout, /readyz within seconds, and recovers', async () => {
        proxy.freeze();
        const started = Date.now();
        expectStoreDown(await server.api('GET', '/api/auth/user', { token }), 'signed-in call while frozen');
        // Bounds, not speed: the configured 3 s query timeout, where it used to be unbounded.
        expect(Date.now() - started).to.be.below(10_000);

        const t0 = Date.now();
        const ready = await server.api('GET', '/readyz');
        expect(ready.status).to.equal(503);
        expect(Date.now() - t0, '/readyz is bounded').to.be.below(5_000);
        // Known down: further calls do not wait for their own timeouts.
        const t1 = Date.now();
        expectStoreDown(await server.api('GET', '/api/namespaces', { token }), 'a call once known down');
        expect(Date.now() - t1).to.be.below(2_000);

        proxy.thaw();
        await eventually(() => server.api('GET', '/readyz'), 200, 20_000);
        await eventually(() => server.api('GET', '/api/auth/user', { token }), 200, 20_000);
      });

      it('answers 503, not 500, when the frozen server holds a new connection until the connect timeout', async () => {
        // As PostgreSQL stopped with SIGSTOP after the pool let its idle connections go: the kernel still accepts
        // the connection, nothing answers it, and pg gives up with "timeout expired" (database.connectTimeout).
        proxy.freeze();
        proxy.cut();
        const started = Date.now();
        expectStoreDown(
          await server.api('GET', '/api/namespaces', { token }),
          'a call that needs a connection',
        );
        expect(Date.now() - started, 'within the connect timeout, not the query timeout').to.be.below(10_000);
        expectStoreDown(await server.api('GET', '/info'), '/info while frozen');

        proxy.thaw();
        await eventually(() => server.api('GET', '/readyz'), 200, 20_000);
        await eventually(() => server.api('GET', '/api/namespaces', { token }), 200, 20_000);
      });
    });
  },
);
