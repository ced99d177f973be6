import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import type { LogDestination } from '@gatehouse/core';
import { expect } from 'chai';
import { createTeam, type Team } from '../integration/accounts/team';
import { agentAuthRequest } from '../support/device-keys';
import { type ApiAnswer, startServer, type TestServer } from '../support/server';
import { histogram } from './lib';

/**
 * The tenant ID is printed in every install command, so a namespace must be able to require more than it to
 * register a device: an install key, which an administrator creates (the secret shown once, kept as a digest),
 * rotates and revokes, with an optional expiry and limit of uses. Where the namespace requires one, a registration
 * with the tenant ID alone is refused with 403 and a message saying what to set; a revoked, rotated, expired or
 * used-up key, or another namespace's, is refused with its reason; and no key reaches the store or the log in clear.
 */
describe('security: install keys', function () {
  this.timeout(120_000);
  let server: TestServer;
  let team: Team;
  let other: Team;
  const log: string[] = [];
  let n = 0;

  before(async () => {
    const destination = new Writable({
      write(chunk, _encoding, done) {
        log.push(String(chunk));
        done();
      },
    }) as unknown as LogDestination;
    // Every registration here comes from 127.0.0.1: the per-minute limit of new devices is not what is tested.
    server = await startServer({
      ssh: false,
      logs: { level: 'trace', destination },
      overrides: { limits: { registrationsPerMinute: 1000 } },
    });
    await server.setup();
    [team, other] = [await createTeam(server, 'keys-a'), await createTeam(server, 'keys-b')];
  });
  after(async () => server?.stop());

  /** A registration of the device `label` (its key and MAC follow from it: the same label is the same device). */
  const register = (tenant: string, installKey?: string, label = `ik-${++n}`): Promise<ApiAnswer> => {
    const mac = `02:${(createHash('sha256').update(label).digest('hex').slice(0, 10).match(/../g) ?? []).join(':')}`;
    const req = agentAuthRequest({ tenant, hostname: label, mac, keyLabel: label });
    return server.api('POST', '/api/devices/auth', {
      body: installKey === undefined ? req.body : { ...req.body, install_key: installKey },
      headers: req.headers,
    });
  };
  const createKey = async (body: Record<string, unknown>, token = team.tokens.administrator) => {
    const res = await server.api('POST', '/api/namespaces/install-keys', { token, body });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body as { id: string; key: string; key_hint: string };
  };
  const requireKey = async (tenant: string, token: string, on: boolean) => {
    const res = await server.api('PUT', `/api/namespaces/${tenant}`, {
      token,
      body: { settings: { require_install_key: on } },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.settings.require_install_key).to.equal(on);
  };

  it('refuses a registration with the tenant ID alone, with 403 and what to set, once the namespace requires a key', async () => {
    // Off by default: existing installs keep registering with the tenant ID.
    const ns = await server.api('GET', `/api/namespaces/${team.tenant}`, { token: team.tokens.observer });
    expect(ns.body.settings.require_install_key).to.equal(false);
    expect((await register(team.tenant)).status).to.equal(200);

    // Only an administrator or owner may turn it on.
    const byOperator = await server.api('PUT', `/api/namespaces/${team.tenant}`, {
      token: team.tokens.operator,
      body: { settings: { require_install_key: true } },
    });
    expect(byOperator.status).to.equal(403);
    await requireKey(team.tenant, team.tokens.administrator, true);

    const refused = await register(team.tenant);
    expect(refused.status).to.equal(403);
    expect(refused.body.message).to.match(/registers new devices only with an install key/);
    expect(refused.body.message).to.include('GATEHOUSE_INSTALL_KEY');
    expect(refused.body).to.not.have.property('token');
    const pending = await server.api('GET', '/api/devices?status=pending', { token: team.tokens.owner });
    expect(pending.body).to.have.length(1);

    const key = await createKey({ name: 'rollout' });
    const admitted = await register(team.tenant, key.key);
    expect(admitted.status, JSON.stringify(admitted.body)).to.equal(200);
    // A device already registered keeps its availability calls without the key.
    const again = await register(team.tenant, undefined, `ik-${n}`);
    expect(again.status).to.equal(200);
    expect(again.body.uid).to.equal(admitted.body.uid);
  });

  it('lets a removed device come back only as a new registration would', async () => {
    const pending = await server.api('GET', '/api/devices?status=pending', { token: team.tokens.owner });
    const keyless = pending.body.find((d: { name: string }) => d.name === 'ik-1');
    expect(keyless, 'the device registered before the key was required').to.not.equal(undefined);
    expect(
      (await server.api('DELETE', `/api/devices/${keyless.uid}`, { token: team.tokens.owner })).status,
    ).to.equal(200);
    // Its agent calls again with the tenant ID only: refused, and it stays removed.
    const back = await register(team.tenant, undefined, 'ik-1');
    expect(back.status).to.equal(403);
    const row = await server.api('GET', `/api/devices/${keyless.uid}`, { token: team.tokens.owner });
    expect(row.body.status).to.equal('removed');
  });

  it('refuses revoked, rotated, expired, used-up and foreign keys, each with its reason', async () => {
    const revoked = await createKey({ name: 'revoked' });
    expect(
      (await server.api('DELETE', `/api/namespaces/install-keys/${revoked.id}`, { token: team.tokens.owner }))
        .status,
    ).to.equal(200);
    const r1 = await register(team.tenant, revoked.key);
    expect(r1.status).to.equal(403);
    expect(r1.body.message).to.match(/install key is not valid for this namespace/);

    const rotated = await createKey({ name: 'rotated' });
    const turned = await server.api('POST', `/api/namespaces/install-keys/${rotated.id}/rotate`, {
      token: team.tokens.administrator,
    });
    expect(turned.status).to.equal(200);
    expect(turned.body.key).to.not.equal(rotated.key);
    expect(turned.body).to.include({ id: rotated.id, name: 'rotated' });
    expect((await register(team.tenant, rotated.key)).status).to.equal(403);
    expect((await register(team.tenant, turned.body.key)).status).to.equal(200);

    const expiring = await createKey({
      name: 'expiring',
      expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    });
    await server.kernel.container.cradle
      .db('install_keys')
      .where({ id: expiring.id })
      .update({ expires_at: new Date(Date.now() - 1000) });
    const r3 = await register(team.tenant, expiring.key);
    expect(r3.status).to.equal(403);
    expect(r3.body.message).to.match(/install key expired at \d{4}-/);

    // A limit of 3 uses, tried by 8 new devices at once: exactly 3 get in.
    const limited = await createKey({ name: 'three-uses', usage_limit: 3 });
    const answers = await Promise.all(Array.from({ length: 8 }, () => register(team.tenant, limited.key)));
    expect(histogram(answers)).to.deep.equal({ 200: 3, 403: 5 });
    for (const usedUp of answers.filter((a) => a.status === 403)) {
      expect(usedUp.body.message).to.match(/registered the 3 devices it allows/);
    }

    // Another namespace's key, and text that is no key at all.
    const theirs = await createKey({ name: 'theirs' }, other.tokens.owner);
    expect((await register(team.tenant, theirs.key)).status).to.equal(403);
    for (const bad of ['x', 'gik_', `${theirs.key}0`, theirs.key.toUpperCase(), 'gik_\u0000']) {
      const res = await register(team.tenant, bad);
      expect(res.status, JSON.stringify(bad)).to.be.oneOf([400, 403]);
    }
    expect((await register(team.tenant, 'k'.repeat(129))).status).to.equal(400);

    const listed = await server.api('GET', '/api/namespaces/install-keys?per_page=100', {
      token: team.tokens.owner,
    });
    const byName = Object.fromEntries(listed.body.map((k: { name: string }) => [k.name, k]));
    expect(byName['three-uses']).to.include({ usage_limit: 3, used_times: 3 });
    expect(byName).to.not.have.property('revoked');
    expect(byName).to.not.have.property('theirs');
    for (const k of listed.body) expect(k).to.not.have.property('key');
  });

  it('manages keys by administrators and owners only, refuses unknown fields and past expiries', async () => {
    for (const role of ['operator', 'observer'] as const) {
      const token = team.tokens[role];
      expect((await server.api('GET', '/api/namespaces/install-keys', { token })).status).to.equal(403);
      const made = await server.api('POST', '/api/namespaces/install-keys', {
        token,
        body: { name: 'nope' },
      });
      expect(made.status).to.equal(403);
    }
    const stray = await server.api('POST', '/api/namespaces/install-keys', {
      token: team.tokens.owner,
      body: { name: 'stray', key: 'gik_mine', tenant_id: other.tenant },
    });
    expect(stray.status).to.equal(400);
    expect(stray.body).to.include.members(['key', 'tenant_id']);
    const past = await server.api('POST', '/api/namespaces/install-keys', {
      token: team.tokens.owner,
      body: { name: 'past', expires_at: '2001-01-01T00:00:00Z' },
    });
    expect(past.status).to.equal(400);
    expect(past.body).to.deep.equal(['expires_at']);
    const twice = await server.api('POST', '/api/namespaces/install-keys', {
      token: team.tokens.owner,
      body: { name: 'ROLLOUT' },
    });
    expect(twice.status).to.equal(409);
    expect(twice.body).to.deep.equal(['name']);
    // Another namespace's key is not reachable by its id.
    const theirs = await createKey({ name: 'hidden' }, other.tokens.owner);
    for (const [method, path] of [
      ['POST', `/api/namespaces/install-keys/${theirs.id}/rotate`],
      ['DELETE', `/api/namespaces/install-keys/${theirs.id}`],
    ] as const) {
      expect((await server.api(method, path, { token: team.tokens.owner })).status).to.equal(404);
    }
    expect((await register(other.tenant, theirs.key)).status).to.equal(200);
  });

  it('keeps only a digest of each key: no table and no log line holds one in clear', async () => {
    const fresh = await createKey({ name: 'at-rest' });
    expect((await register(team.tenant, fresh.key)).status).to.equal(200);
    const db = server.kernel.container.cradle.db;
    const row = await db('install_keys').where({ id: fresh.id }).first();
    expect(row.key_digest).to.equal(createHash('sha256').update(fresh.key).digest('hex'));
    const secret = fresh.key.slice(fresh.key_hint.length + 1);
    expect(secret).to.match(/^[0-9a-f]{40}$/);
    const tables = (await db('information_schema.tables')
      .where({ table_schema: db.raw('current_schema()'), table_type: 'BASE TABLE' })
      .pluck('table_name')) as string[];
    const holding: string[] = [];
    for (const table of tables) {
      const rows = (await db.raw('select row_to_json(t)::text as j from ?? t', [table])).rows as {
        j: string;
      }[];
      if (rows.some(({ j }) => j.includes(secret))) holding.push(table);
    }
    expect(holding).to.deep.equal([]);
    expect(log.length, 'the server logged at trace level').to.be.greaterThan(0);
    expect(log.filter((line) => line.includes(secret))).to.deep.equal([]);
  });
});
