import { TenantStore } from '@gatehouse/core';
import type { RegisteredRoute } from '@gatehouse/core/http/route';
import type { TSchema } from '@sinclair/typebox';
import { asValue } from 'awilix';
import { expect } from 'chai';
import { sampleBody } from '../integration/permissions/requests';
import type { ApiOptions } from '../support/server';
import { apiAt, internalOnly, label, sendAll } from './lib';
import { buildWorld, fill, pathValues, type Side, snapshot, strayName, type World } from './world';

type Props = Record<string, TSchema>;

/**
 * A critical finding of a security review: extra body fields (`tenant_id`, `id`, `created_at`...) reached the database, and an
 * administrator of one namespace moved a firewall rule into another. For every route with a body (from the route
 * table, so a new one is covered without a line here), called by a caller the route admits and aimed at the
 * caller's own objects: the body a caller would send plus fields the schema does not name, at the top and inside
 * nested objects, is 400 with those names in the list, and nothing in the store changes, in either namespace.
 */
describe('security: unknown body fields on every write route', function () {
  this.timeout(120_000);
  let world: World;
  let initial: { a: string[]; b: string[] };

  const credentials = (r: RegisteredRoute, side: Side): ApiOptions | undefined => {
    // Instance administration admits the instance administrator (the first-run user), not a namespace's owner.
    if (r.instanceAdmin) return { token: world.admin.token };
    if (r.auth.includes('user')) return { token: side.team.tokens.owner };
    if (r.auth.includes('apiKey')) return { apiKey: side.keys.owner };
    if (r.auth.includes('device')) return { token: side.device.token };
    if (r.auth.includes('none') || internalOnly(r)) return {};
    return undefined;
  };
  const withBody = () => world.server.kernel.routes.filter((r) => r.schema.body);
  /** Calls only other instances make are sent to the internal listener, where they are served. */
  const via = (r: RegisteredRoute) => (internalOnly(r) ? apiAt(world.server.kernel.internalUrl) : undefined);

  before(async () => {
    world = await buildWorld();
    initial = { a: await snapshot(world.server, world.a), b: await snapshot(world.server, world.b) };
  });
  after(async () => {
    await world?.server.stop();
  });

  it('covers every route with a body', () => {
    // The kernel's routes with a body today; the list grows by itself as routes are added.
    expect(withBody().length).to.be.greaterThan(40);
    for (const r of withBody()) expect(credentials(r, world.a), label(r)).to.not.equal(undefined);
  });

  it('refuses extra top-level fields, naming each one', async () => {
    const { a, b } = world;
    const routes = withBody();
    const extras = routes.map((r) => {
      const named = Object.keys(((r.schema.body as TSchema).properties ?? {}) as Props);
      const candidates: Record<string, unknown> = {
        tenant_id: b.team.tenant,
        id: b.rule,
        uid: b.device.uid,
        created_at: '2001-01-01T00:00:00Z',
        [strayName()]: 'x',
      };
      return Object.fromEntries(Object.entries(candidates).filter(([k]) => !named.includes(k)));
    });
    const answers = await sendAll(
      world.server,
      routes.map((r, i) => {
        const base = sampleBody(r);
        return {
          method: r.method,
          path: fill(r, pathValues(r, a)),
          via: via(r),
          opts: {
            ...credentials(r, a),
            body: { ...(base && typeof base === 'object' ? base : {}), ...extras[i] },
          },
        };
      }),
      4,
    );
    const wrong: string[] = [];
    answers.forEach((res, i) => {
      const r = routes[i] as RegisteredRoute;
      const names = Object.keys(extras[i] as object);
      const listed = Array.isArray(res.body) ? (res.body as string[]) : [];
      const missing = names.filter((n) => !listed.includes(n));
      if (res.status !== 400 || missing.length)
        wrong.push(`${label(r)} -> ${res.status} ${JSON.stringify(res.body)} (expected ${names})`);
    });
    expect(wrong).to.deep.equal([]);
  });

  it('refuses unknown fields inside nested objects, naming them by path', async () => {
    const { a } = world;
    const cases: { r: RegisteredRoute; prop: string; stray: string; body: Record<string, unknown> }[] = [];
    for (const r of withBody()) {
      const props = ((r.schema.body as TSchema).properties ?? {}) as Props;
      for (const [prop, schema] of Object.entries(props)) {
        const branch = schema.properties
          ? schema
          : (schema.anyOf as TSchema[] | undefined)?.find((s) => s.properties);
        if (!branch) continue;
        const base = (sampleBody(r) ?? {}) as Record<string, unknown>;
        const inner = base[prop] && typeof base[prop] === 'object' ? (base[prop] as object) : {};
        const stray = strayName();
        cases.push({ r, prop, stray, body: { ...base, [prop]: { ...inner, [stray]: 1 } } });
      }
    }
    expect(cases.length, 'routes with nested objects in their body').to.be.greaterThan(5);
    const answers = await sendAll(
      world.server,
      cases.map((c) => ({
        method: c.r.method,
        path: fill(c.r, pathValues(c.r, a)),
        via: via(c.r),
        opts: { ...credentials(c.r, a), body: c.body },
      })),
      4,
    );
    const wrong: string[] = [];
    answers.forEach((res, i) => {
      const c = cases[i] as (typeof cases)[number];
      const listed = Array.isArray(res.body) ? (res.body as string[]) : [];
      if (res.status !== 400 || !listed.includes(`${c.prop}.${c.stray}`))
        wrong.push(`${label(c.r)} ${c.prop}.${c.stray} -> ${res.status} ${JSON.stringify(res.body)}`);
    });
    expect(wrong).to.deep.equal([]);
  });

  it('changed nothing stored in either namespace', async () => {
    expect(await snapshot(world.server, world.b), "B's rows").to.deep.equal(initial.b);
    expect(await snapshot(world.server, world.a), "A's rows").to.deep.equal(initial.a);
  });

  it('services write only named columns: extra fields given past validation never move or rename a row', async () => {
    const { a, b, server } = world;
    const { sessions, db } = server.kernel.container.cradle;
    // A's request scope, as the router makes it for a caller of A.
    const scope = server.kernel.container.createScope();
    scope.register({ tenant: asValue(new TenantStore(db, a.team.tenant)) });
    const { firewallRules } = scope.cradle;
    const hostile = { tenant_id: b.team.tenant, id: 'f'.repeat(24), created_at: new Date(0) };
    // As a route handler would call them, with an object carrying more than the fields the service takes.
    await firewallRules.update(a.rule, { priority: 9, ...hostile } as never);
    await firewallRules.create({
      action: 'allow',
      filter: { hostname: '.*' },
      priority: 11,
      source_ip: '.*',
      username: '.*',
      ...hostile,
    } as never);
    await sessions.update(a.team.tenant, a.session, { authenticated: true, ...hostile } as never);
    await sessions.addRecords(a.team.tenant, a.session, [
      { seat: 1, message: 'x', time: new Date(), width: 80, height: 24, ...hostile } as never,
    ]);
    const rules = await server.api('GET', '/api/firewall/rules', { token: a.team.tokens.owner });
    expect(rules.body.map((r: { priority: number }) => r.priority).sort()).to.deep.equal([11, 9]);
    expect(rules.body.map((r: { id: string }) => r.id))
      .to.include(a.rule)
      .and.not.include(hostile.id);
    expect(await snapshot(server, b), "B's rows").to.deep.equal(initial.b);
  });
});
