import {
  applyFilter,
  definePlugin,
  defineRoute,
  listPage,
  listQuery,
  NotFound,
  parseFilter,
} from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';
import { expect } from 'chai';
import { startServer, type TestServer } from '../../support/server';

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');

/** A fixture plugin exercising the kernel's conventions through real HTTP and a real store. */
const fixture = definePlugin({
  name: 'fixture',
  dependsOn: ['community'],
  register(ctx) {
    ctx.routes([
      defineRoute({
        method: 'GET',
        path: '/api/fixture/items',
        auth: ['none'],
        summary: 'list fixture items',
        tags: ['fixture'],
        schema: { query: listQuery({ sortBy: ['name', 'n'], sortDefault: 'n' }) },
        paged: true,
        async handler({ query, services }) {
          const qb = services.db('fixture_items').select('name', 'n', 'flag');
          applyFilter(qb, parseFilter(query.filter), {
            name: { column: 'name', kind: 'string' },
            n: { column: 'n', kind: 'number' },
            flag: { column: 'flag', kind: 'boolean' },
          });
          return listPage(qb, query, { column: query.sort_by as string, direction: query.order_by });
        },
      }),
      defineRoute({
        method: 'POST',
        path: '/api/fixture/echo/:id',
        auth: ['none'],
        summary: 'echo',
        tags: ['fixture'],
        schema: {
          params: T.Object({ id: T.Integer({ minimum: 1 }) }),
          body: T.Object({ name: T.String({ minLength: 3, maxLength: 20 }), n: T.Integer() }),
        },
        handler({ params, body }) {
          if (params.id === 404) throw new NotFound('item');
          return { id: params.id, ...body };
        },
      }),
      defineRoute({
        method: 'GET',
        path: '/api/fixture/crash',
        auth: ['none'],
        summary: 'fails unexpectedly',
        tags: ['fixture'],
        schema: {},
        handler() {
          throw new Error('secret driver detail');
        },
      }),
    ]);
  },
  async boot({ db }) {
    await db.schema.createTable('fixture_items', (t) => {
      t.string('name');
      t.integer('n');
      t.boolean('flag');
    });
    await db('fixture_items').insert(
      Array.from({ length: 25 }, (_, i) => ({
        name: `item-${String(i).padStart(2, '0')}`,
        n: i,
        flag: i % 2 === 0,
      })),
    );
  },
});

describe('API conventions', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ extraPlugins: [fixture], ssh: false });
  });
  after(async () => {
    await server?.stop();
  });

  it('pages with defaults 1 and 10 and puts the total in X-Total-Count', async () => {
    const res = await server.api('GET', '/api/fixture/items');
    expect(res.status).to.equal(200);
    expect(res.body).to.have.length(10);
    expect(res.headers.get('x-total-count')).to.equal('25');
    expect(res.body[0].n).to.equal(24);
    const last = await server.api('GET', '/api/fixture/items?page=3&per_page=10&order_by=asc');
    expect(last.body.map((r: { n: number }) => r.n)).to.deep.equal([20, 21, 22, 23, 24]);
  });

  it('answers 400 naming the parameter for out-of-range paging and unknown sorts', async () => {
    for (const [q, field] of [
      ['page=0', 'page'],
      ['per_page=0', 'per_page'],
      ['per_page=101', 'per_page'],
      ['page=abc', 'page'],
      ['order_by=up', 'order_by'],
      ['sort_by=password', 'sort_by'],
    ]) {
      const res = await server.api('GET', `/api/fixture/items?${q}`);
      expect(res.status, q).to.equal(400);
      expect(res.body, q).to.deep.equal([field]);
    }
  });

  it('filters with contains, eq, bool, gt and lt joined by and/or', async () => {
    const prop = (name: string, operator: string, value: unknown) => ({
      type: 'property',
      params: { name, operator, value },
    });
    const op = (name: string) => ({ type: 'operator', params: { name } });
    const get = async (items: unknown[]) =>
      (
        await server.api(
          'GET',
          `/api/fixture/items?per_page=100&order_by=asc&filter=${encodeURIComponent(b64(items))}`,
        )
      ).body as { n: number }[];
    expect((await get([prop('name', 'contains', 'M-1')])).map((r) => r.n)).to.deep.equal([
      10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
    ]);
    expect(
      (await get([prop('n', 'gt', 20), op('and'), prop('flag', 'bool', true)])).map((r) => r.n),
    ).to.deep.equal([22, 24]);
    expect((await get([prop('n', 'lt', 2), op('or'), prop('n', 'eq', 7)])).map((r) => r.n)).to.deep.equal([
      0, 1, 7,
    ]);
    expect(await get([prop('name', 'contains', '%')])).to.deep.equal([]);
  });

  it('answers a malformed filter with 400, never 500', async () => {
    for (const f of [
      '!!!',
      b64({}),
      b64([{ type: 'property', params: { name: 'secret', operator: 'eq', value: 1 } }]),
      b64([{ type: 'property', params: { name: 'n', operator: 'contains', value: 1 } }]),
    ]) {
      const res = await server.api('GET', `/api/fixture/items?filter=${encodeURIComponent(f)}`);
      expect(res.status, f).to.equal(400);
      expect(res.body).to.deep.equal(['filter']);
    }
  });

  it('validates params and bodies, naming wrong and missing fields', async () => {
    const ok = await server.api('POST', '/api/fixture/echo/7', { body: { name: 'abc', n: 1 } });
    expect(ok.status).to.equal(200);
    expect(ok.body).to.deep.equal({ id: 7, name: 'abc', n: 1 });
    const wrongTypes = await server.api('POST', '/api/fixture/echo/7', { body: { name: 5, n: 'x' } });
    expect(wrongTypes.status).to.equal(400);
    expect(wrongTypes.body).to.have.members(['name', 'n']);
    const missing = await server.api('POST', '/api/fixture/echo/7', { body: {} });
    expect(missing.body).to.have.members(['name', 'n']);
    const badParam = await server.api('POST', '/api/fixture/echo/zero', { body: { name: 'abc', n: 1 } });
    expect(badParam.status).to.equal(400);
    expect(badParam.body).to.deep.equal(['id']);
    const arrayBody = await server.api('POST', '/api/fixture/echo/7', { body: [1, 2] });
    expect(arrayBody.status).to.equal(400);
  });

  it('answers malformed JSON with 400 and an oversized body with 413', async () => {
    const malformed = await server.api('POST', '/api/fixture/echo/7', { raw: '{"name":' });
    expect(malformed.status).to.equal(400);
    expect(malformed.body).to.deep.equal(['body']);
    const big = await server.api('POST', '/api/fixture/echo/7', {
      raw: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024), n: 1 }),
    });
    expect(big.status).to.equal(413);
    expect(big.body).to.have.property('message');
  });

  it('answers unknown routes and thrown taxonomy errors in the one body shape', async () => {
    const unknown = await server.api('GET', '/api/no/such/route');
    expect(unknown.status).to.equal(404);
    expect(unknown.body).to.deep.equal({ message: 'route not found' });
    const nf = await server.api('POST', '/api/fixture/echo/404', { body: { name: 'abc', n: 1 } });
    expect(nf.status).to.equal(404);
    expect(nf.body).to.deep.equal({ message: 'item not found' });
  });

  it('hides unexpected errors behind Internal Server Error and a request id', async () => {
    const res = await server.api('GET', '/api/fixture/crash', { headers: { 'x-request-id': 'trace-123' } });
    expect(res.status).to.equal(500);
    expect(res.body).to.deep.equal({ message: 'Internal Server Error' });
    expect(res.headers.get('x-request-id')).to.equal('trace-123');
    const generated = await server.api('GET', '/info');
    expect(generated.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
  });

  it('serves liveness, readiness and Prometheus metrics', async () => {
    expect((await server.api('GET', '/healthz')).status).to.equal(200);
    const ready = await server.api('GET', '/readyz');
    expect(ready.status).to.equal(200);
    expect(ready.body).to.deep.equal({ status: 'ready' });
    // Prometheus metrics on the internal listener (the public one has them only with a token: test/security).
    const res = await fetch(`${server.kernel.internalUrl}/metrics`);
    const metrics = { status: res.status, body: await res.text() };
    expect(metrics.status).to.equal(200);
    expect(metrics.body).to.match(
      /gatehouse_http_requests_total\{method="GET",route="\/api\/fixture\/items",status="200"\} \d+/,
    );
    expect(metrics.body).to.match(/gatehouse_http_request_duration_seconds_bucket/);
    expect(metrics.body).to.match(/gatehouse_process_resident_memory_bytes/);
  });
});
