import { expect } from 'chai';
import type { ApiOptions } from '../support/server';
import { buildWorld, type World } from './world';

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');
const NUL = '\u0000';
const LONE = '\ud800';

/**
 * The answers a security review found to be 500s, each now 400 naming the field (every 400 body is the
 * JSON array of the offending field names): NUL bytes and lone surrogates reaching PostgreSQL through sign-in, the
 * agent's call, MFA, tags and firewall rules; list filters whose values do not fit the property; malformed bodies.
 * The fuzzer (fuzz.test.ts) sends such values to every operation; these are the named cases, kept readable.
 */
describe('security: bad input is 400 naming the field, never a 500', function () {
  this.timeout(120_000);
  let world: World;
  const call = (method: string, path: string, opts: ApiOptions = {}) => world.server.api(method, path, opts);
  const owner = () => ({ token: world.a.team.tokens.owner });

  before(async () => {
    world = await buildWorld({ sides: ['a'] });
  });
  after(async () => {
    await world?.server.stop();
  });

  const expect400 = async (
    what: string,
    method: string,
    path: string,
    opts: ApiOptions,
    fields: string[],
  ): Promise<void> => {
    const res = await call(method, path, opts);
    expect({ what, status: res.status, body: res.body }).to.deep.equal({ what, status: 400, body: fields });
  };

  it('sign-in calls: NUL and lone surrogates in the user name or password', async () => {
    for (const path of ['/api/login', '/api/auth/user']) {
      await expect400(path, 'POST', path, { body: { username: `ada${NUL}`, password: 'x' } }, ['username']);
      await expect400(path, 'POST', path, { body: { username: 'ada', password: `p${NUL}w` } }, ['password']);
      await expect400(path, 'POST', path, { body: { username: `${LONE}ada`, password: 'x' } }, ['username']);
    }
  });

  it("the agent's registration: NUL in nested fields is named by path", async () => {
    const body = {
      info: { id: 'debian', pretty_name: 'Debian', version: '0.1.0', arch: 'amd64', platform: 'native' },
      sessions: [],
      hostname: 'h',
      identity: { mac: `aa${NUL}` },
      public_key: 'k',
      tenant_id: world.a.team.tenant,
    };
    await expect400('mac', 'POST', '/api/devices/auth', { body }, ['identity.mac']);
    await expect400(
      'tenant',
      'POST',
      '/api/auth/device',
      { body: { ...body, identity: { mac: 'aa' }, tenant_id: `x${NUL}` } },
      ['tenant_id'],
    );
    await expect400(
      'hostname',
      'POST',
      '/api/devices/auth',
      { body: { ...body, identity: { mac: 'aa' }, hostname: NUL } },
      ['hostname'],
    );
  });

  it('MFA calls: NUL in tokens, codes, identifiers and the user id of the path', async () => {
    await expect400(
      'mfa auth',
      'POST',
      '/api/user/mfa/auth',
      { body: { token: `t${NUL}`, code: '123456' } },
      ['token'],
    );
    await expect400(
      'mfa recover',
      'POST',
      '/api/user/mfa/recover',
      { body: { identifier: NUL, recovery_code: 'x' } },
      ['identifier'],
    );
    await expect400('mfa reset', 'POST', '/api/user/mfa/reset', { body: { identifier: `ada${NUL}` } }, [
      'identifier',
    ]);
    await expect400(
      'mfa reset id',
      'PUT',
      `/api/user/mfa/reset/ab%00cd`,
      { body: { main_email_code: 'x', recovery_email_code: 'y' } },
      ['id'],
    );
  });

  it('tags: NUL in the path and in bodies', async () => {
    const { device } = world.a;
    await expect400('rename', 'PUT', '/api/tags/ab%00c', { ...owner(), body: { tag: 'fine-tag' } }, ['tag']);
    await expect400(
      'rename to',
      'PUT',
      `/api/tags/${world.a.tag}`,
      { ...owner(), body: { tag: `bad${NUL}tag` } },
      ['tag'],
    );
    await expect400('delete', 'DELETE', '/api/tags/ab%00c', owner(), ['tag']);
    await expect400(
      'add',
      'POST',
      `/api/devices/${device.uid}/tags`,
      { ...owner(), body: { tag: `ab${NUL}c` } },
      ['tag'],
    );
    await expect400(
      'set',
      'PUT',
      `/api/devices/${device.uid}/tags`,
      { ...owner(), body: { tags: [`ab${NUL}c`] } },
      ['tags.0'],
    );
    await expect400('remove', 'DELETE', `/api/devices/${device.uid}/tags/ab%00c`, owner(), ['tag']);
  });

  it('firewall rules: NUL in patterns, filters and ids', async () => {
    const rule = { action: 'deny', filter: { hostname: '.*' }, priority: 1, source_ip: '.*', username: '.*' };
    await expect400(
      'username',
      'POST',
      '/api/firewall/rules',
      { ...owner(), body: { ...rule, username: `r${NUL}` } },
      ['username'],
    );
    await expect400(
      'filter',
      'PUT',
      `/api/firewall/rules/${world.a.rule}`,
      { ...owner(), body: { filter: { hostname: `a${NUL}` } } },
      ['filter.hostname'],
    );
    await expect400('id', 'GET', '/api/firewall/rules/%00', owner(), ['id']);
  });

  it('query parameters: NUL in any of them', async () => {
    await expect400('sort', 'GET', '/api/devices?sort_by=%00', owner(), ['sort_by']);
    await expect400('stray', 'GET', '/api/sessions?x=a%00b', owner(), ['x']);
  });

  it('list filters whose values do not fit the property are 400 ["filter"]', async () => {
    const item = (name: string, operator: string, value: unknown) => ({
      type: 'property',
      params: { name, operator, value },
    });
    const filters: [string, unknown][] = [
      ['a date that is not one', [item('last_seen', 'eq', 'notadate')]],
      ['a boolean that is neither', [item('online', 'eq', 'maybe')]],
      ['__proto__', [item('__proto__', 'eq', 'x')]],
      ['constructor', [item('constructor', 'eq', 'x')]],
      ['an unknown property', [item('password_hash', 'eq', 'x')]],
      ['a year past timestamptz', [item('last_seen', 'gt', '+275000-01-01T00:00:00Z')]],
      ['a year before it', [item('created_at', 'lt', -8.64e15)]],
      ['a NUL in a value', [item('name', 'contains', `a${NUL}`)]],
      ['a lone surrogate in a value', [item('hostname', 'eq', LONE)]],
      ['an object as a value', [item('name', 'eq', { $ne: 1 })]],
      ['gt on a string', [item('name', 'gt', 'a')]],
      ['not a list', { type: 'property' }],
      ['an unknown operator', [item('name', 'like', 'a')]],
      ['an unknown joiner', [item('name', 'eq', 'a'), { type: 'operator', params: { name: 'xor' } }]],
    ];
    for (const [what, filter] of filters) {
      for (const list of ['/api/devices', '/api/containers'])
        await expect400(
          `${list}: ${what}`,
          'GET',
          `${list}?filter=${encodeURIComponent(b64(filter))}`,
          owner(),
          ['filter'],
        );
    }
    await expect400('not base64 JSON', 'GET', '/api/devices?filter=%%%%', owner(), ['filter']);
  });

  it('filters that fit the property still work', async () => {
    const filter = b64([
      { type: 'property', params: { name: 'online', operator: 'eq', value: false } },
      { type: 'property', params: { name: 'last_seen', operator: 'gt', value: '2000-01-01T00:00:00Z' } },
      { type: 'property', params: { name: 'tags', operator: 'contains', value: world.a.tag } },
    ]);
    const res = await call('GET', `/api/devices?filter=${encodeURIComponent(filter)}`, owner());
    expect(res.status).to.equal(200);
    expect(res.body.map((d: { uid: string }) => d.uid)).to.deep.equal([world.a.device.uid]);
  });

  it('terminal output holding NUL bytes is recorded, not refused by the store', async () => {
    const { a, server } = world;
    await server.kernel.container.cradle.sessions.addRecords(a.team.tenant, a.session, [
      { seat: 3, message: `bin${NUL}ary${NUL}`, time: new Date(), width: 80, height: 24 },
    ]);
    const res = await call('GET', `/api/sessions/${a.session}/records/3`, owner());
    expect(res.status).to.equal(200);
    expect(res.body.map((r: { message: string }) => r.message)).to.deep.equal(['binary']);
  });

  it('session events and terminal types holding NULs (sent by SSH clients) are kept in the audit, marked', async () => {
    const { a, server } = world;
    const { sessions } = server.kernel.container.cradle;
    await sessions.addEvents(a.team.tenant, a.session, [
      { type: 'exec', seat: 0, data: { command: `rm -rf /${NUL}hidden` } },
      { type: 'exec', seat: 1, data: { command: `broken \ud800 pair` } },
    ]);
    await sessions.update(a.team.tenant, a.session, { term: `xterm${NUL}` });
    const res = await call('GET', `/api/sessions/${a.session}`, owner());
    expect(res.status).to.equal(200);
    const commands = res.body.events.items
      .filter((e: { type: string }) => e.type === 'exec')
      .map((e: { data: { command: string } }) => e.data.command);
    expect(commands).to.deep.equal(['rm -rf /\u2400hidden', 'broken \ufffd pair']);
    expect(res.body.term).to.equal('xterm\u2400');
  });

  it('malformed and wrongly shaped bodies are 400 naming the body', async () => {
    await expect400('malformed', 'POST', '/api/login', { raw: '{"username":' }, ['body']);
    for (const raw of ['null', '"text"', '[]', '42'])
      await expect400(`body ${raw}`, 'POST', '/api/login', { raw }, ['body']);
  });
});
