import { type Role, roles } from '@gatehouse/core';
import type { RegisteredRoute } from '@gatehouse/core/http/route';
import { expect } from 'chai';
import type { ApiOptions } from '../support/server';
import { endsSignIn, histogram, internalOnly, label, publicOnly, secondSignIn, sendAll } from './lib';
import {
  buildWorld,
  example,
  fill,
  markers,
  pathValues,
  type Schema,
  SHARED_TAG,
  type Side,
  snapshot,
  type World,
} from './world';

interface Attempt {
  route: RegisteredRoute;
  who: string;
  opts: ApiOptions;
  path: string;
  /** The path names one of B's objects (its namespace, a device, a key...), or the body one of its ids. */
  aimed: boolean;
}

/**
 * The tenant-isolation matrix, generated from the route table: every route that takes credentials x every member
 * role of namespace A by user token and by API key (and A's device token where a route takes one) x B's ids in the
 * path and the body. A call whose path names an object of B answers 403 or 404; no answer to A carries anything of
 * B's; and afterwards not one stored row of B differs. A new route is in the table, so it is in the matrix.
 */
describe('security: tenant isolation, every route x every role and API key x foreign ids', function () {
  this.timeout(120_000);
  let world: World;
  let initial: string[];
  const attempts: Attempt[] = [];
  const answers: { status: number; body: unknown }[] = [];

  /** Everything that would tell A something about B. */
  const secrets = (b: Side) => [
    ...markers(b),
    ...Object.values(b.keyNames),
    ...Object.values(b.keys),
    b.tag,
    // Every name made for B starts so: its namespace, members (and their e-mail addresses), keys and tag.
    `${b.name}-`,
  ];

  before(async () => {
    world = await buildWorld();
    initial = await snapshot(world.server, world.b);
    const { a, b } = world;
    const foreign = new Set(secrets(b));
    for (const route of world.server.kernel.routes) {
      if (publicOnly(route) || internalOnly(route)) continue;
      const values = pathValues(route, b);
      const path = fill(route, values);
      const body = route.schema.body ? example(route.schema.body as Schema, 'body', b, true) : undefined;
      // Aimed at B: its object in the path, or one of its ids in the body (tags and names are free text).
      const text = JSON.stringify(body) ?? '';
      const aimed =
        Object.values(values).some((v) => foreign.has(v)) || markers(b).some((id) => text.includes(id));
      const callers: [string, ApiOptions][] = [];
      for (const role of roles) {
        // Sign-out is sent with a sign-in of its own, so the tokens every other call carries stay live.
        if (route.auth.includes('user'))
          callers.push([
            `${role} token`,
            {
              token: endsSignIn(route)
                ? await secondSignIn(world.server, a.team.ids[role as Role], a.team.tenant)
                : a.team.tokens[role as Role],
            },
          ]);
        if (route.auth.includes('apiKey')) callers.push([`${role} key`, { apiKey: a.keys[role as Role] }]);
      }
      if (route.auth.includes('device')) callers.push(['device token', { token: a.device.token }]);
      for (const [who, opts] of callers)
        attempts.push({
          route,
          who,
          path,
          aimed,
          opts: { ...opts, ...(body === undefined ? {} : { body }) },
        });
    }
    answers.push(
      ...(await sendAll(
        world.server,
        attempts.map((t) => ({ method: t.route.method, path: t.path, opts: t.opts })),
        4,
      )),
    );
  });
  after(async () => {
    await world?.server.stop();
  });

  it('aims at B from every route that takes an id, for every role, key and device', () => {
    const aimed = new Set(attempts.filter((t) => t.aimed).map((t) => label(t.route)));
    expect(aimed.size, 'routes aimed at B').to.be.greaterThan(50);
    expect(attempts.length).to.be.greaterThan(500);
    if (process.env.ISOLATION_DEBUG)
      attempts.forEach((t, i) => {
        if (t.who === 'owner token' || t.who === 'owner key' || t.who === 'device token')
          console.log(
            label(t.route),
            t.who,
            answers[i]?.status,
            JSON.stringify(answers[i]?.body).slice(0, 100),
          );
      });
    console.log(
      `      isolation: ${attempts.length} calls from A (${aimed.size} routes aimed at B's ids); statuses ${JSON.stringify(histogram(answers))}`,
    );
  });

  it("answers 403 or 404 to every call aimed at B's objects", () => {
    const wrong = attempts
      .map((t, i) => [t, answers[i] as { status: number; body: unknown }] as const)
      .filter(([t, res]) => t.aimed && ![403, 404].includes(res.status))
      .map(
        ([t, res]) =>
          `${t.route.method} ${t.path} as A's ${t.who} -> ${res.status} ${JSON.stringify(res.body)}`,
      );
    expect(wrong).to.deep.equal([]);
  });

  it('never answers 5xx, and no answer to A carries anything of B', () => {
    const leaks: string[] = [];
    const foreign = secrets(world.b);
    attempts.forEach((t, i) => {
      const res = answers[i] as { status: number; body: unknown };
      const text = JSON.stringify(res.body) ?? '';
      const seen = foreign.filter((s) => text.includes(s));
      if (res.status >= 500 || seen.length)
        leaks.push(
          `${label(t.route)} as A's ${t.who} -> ${res.status} shows ${seen.join(', ') || text.slice(0, 200)}`,
        );
    });
    expect(leaks).to.deep.equal([]);
  });

  it("does not list B's objects to A on any list call", async () => {
    const { a, b, server } = world;
    const foreign = secrets(b);
    const lists = server.kernel.routes.filter(
      (r) => r.method === 'GET' && !r.path.includes(':') && !publicOnly(r),
    );
    const leaks: string[] = [];
    for (const r of lists) {
      for (const opts of [{ token: a.team.tokens.owner }, { apiKey: a.keys.owner }]) {
        if (opts.token ? !r.auth.includes('user') : !r.auth.includes('apiKey')) continue;
        for (const q of ['', '?status=pending', '?status=removed', '?per_page=100']) {
          const res = await server.api('GET', `${r.path}${q}`, opts);
          const text = JSON.stringify(res.body) ?? '';
          const seen = foreign.filter((s) => text.includes(s));
          if (seen.length) leaks.push(`${label(r)}${q} -> ${seen.join(', ')}`);
        }
      }
    }
    expect(leaks).to.deep.equal([]);
  });

  it('acting on a tag name B also uses, in A, leaves B alone (every route that takes a tag)', async () => {
    const { a, b, server } = world;
    const owner = { token: a.team.tokens.owner };
    const changed: string[] = [];
    for (const route of server.kernel.routes.filter((r) => r.path.includes(':tag') && !publicOnly(r))) {
      // A's device and rule carry the shared tag again before each call, so each call finds it.
      await server.api('POST', `/api/devices/${a.device.uid}/tags`, { ...owner, body: { tag: SHARED_TAG } });
      await server.api('PUT', `/api/firewall/rules/${a.rule}/tags`, {
        ...owner,
        body: { tags: [a.tag, SHARED_TAG] },
      });
      const body = route.schema.body
        ? (example(route.schema.body as Schema, 'body', a, true) as Record<string, unknown>)
        : undefined;
      if (body && 'tag' in body) body.tag = 'renamed-shared';
      const path = fill(route, { ...pathValues(route, a), tag: SHARED_TAG });
      const res = await server.api(route.method, path, { ...owner, ...(body ? { body } : {}) });
      if (res.status >= 500) changed.push(`${label(route)} -> ${res.status}`);
      if (JSON.stringify(await snapshot(server, b)) !== JSON.stringify(initial))
        changed.push(`${label(route)} (${res.status}) changed B's rows`);
    }
    expect(changed).to.deep.equal([]);
  });

  it('left every stored row of B as it was', async () => {
    expect(await snapshot(world.server, world.b)).to.deep.equal(initial);
  });
});
