import { expect } from 'chai';
import { eventually } from '../../support/agent-process';
import { DEVICE_PASSWORD, GatewayWorld } from './gateway-world';

/**
 * The gateway's refusals, as users meet them. Before sign-in every refusal reads as a failed sign-in, whatever it
 * names (test/security/ssh-enumeration.test.ts); a user who signs in with a key of the namespace is told why.
 */
describe('ssh through the gateway: clear refusals and the firewall', function () {
  this.timeout(120_000);
  let world: GatewayWorld;
  let key: { file: string; data: string };
  before(async () => {
    // Refused password sign-ins from 127.0.0.1 are part of these tests: no penalties for it (core/ssh/penalties.ts).
    world = await GatewayWorld.start({
      deviceName: 'guarded',
      overrides: { ssh: { penalties: { exempt: ['127.0.0.1'] } } },
    });
    key = await world.keyForEveryHost('refusals');
  });
  after(async () => {
    await world?.stop();
  });

  /** A sign-in with the device password: refused before sign-in with the same words whatever the reason. */
  const withPassword = (target: string) =>
    world.run(
      'ssh',
      [
        ...world.sshOptions(),
        ...world.passwordOptions(),
        '-p',
        String(world.server.sshPort),
        `${target}@127.0.0.1`,
        'true',
      ],
      { password: DEVICE_PASSWORD, timeoutMs: 20_000 },
    );
  /** A sign-in with a key of the namespace (for every user and host): told why, when the device is there. */
  const attempt = (target: string) => world.sshKey(key.file, ['true'], target);
  const NOT_SIGNED_IN = 'gatehouse: not signed in';

  it('answers an unknown namespace, device or uid as a failed sign-in, and says what a malformed target is', async () => {
    const ns = await withPassword('root@nowhere.guarded');
    expect(ns.code).to.equal(255);
    const device = await withPassword(`root@${world.namespace}.missing`);
    const uid = await withPassword(`root@${'f'.repeat(64)}`);
    for (const res of [ns, device, uid]) {
      expect(res.code).to.equal(255);
      expect(res.stderr).to.contain(NOT_SIGNED_IN);
      expect(res.stderr).to.contain('Permission denied');
      expect(res.stderr).to.not.match(/not found|no device with uid/);
    }
    // Keys or not: what does not exist is not named.
    const byKey = await attempt('root@nowhere.guarded');
    expect(byKey.code).to.equal(255);
    expect(byKey.stderr).to.contain(NOT_SIGNED_IN);
    const bad = await withPassword('just-a-name');
    expect(bad.stderr).to.contain('is not a device address');
    for (const res of [ns, device, uid, bad]) expect(res.stderr).to.not.match(/at .*\.ts:\d+/);
  });

  it('reaches the device by its uid as well', async () => {
    const res = await world.run(
      'ssh',
      [
        ...world.sshOptions(),
        ...world.passwordOptions(),
        '-p',
        String(world.server.sshPort),
        `root@${world.deviceUid}@127.0.0.1`,
        'echo by-uid',
      ],
      { password: DEVICE_PASSWORD },
    );
    expect(res.code).to.equal(0);
    expect(res.stdout.toString()).to.equal('by-uid\n');
  });

  it('says a pending device is waiting to be accepted, and keeps the attempt as a session', async () => {
    const pending = world.startAgent('newcomer', '02:00:00:00:01:01');
    try {
      await world.waitForDevice('pending', 'newcomer');
      const res = await attempt(world.target('root', 'newcomer'));
      expect(res.code).to.equal(255);
      expect(res.stderr).to.contain(
        `gatehouse: device ${world.namespace}.newcomer is waiting to be accepted`,
      );
      // With the password alone, the user has not signed in: a failed sign-in, as for any other reason.
      const password = await withPassword(world.target('root', 'newcomer'));
      expect(password.stderr).to.contain(NOT_SIGNED_IN);
      expect(password.stderr).to.not.contain('waiting to be accepted');
      // Events reach the store in quarter-second batches and the row closes after ssh has exited: wait, bounded.
      const refused = await eventually(async () => {
        const sessions = await world.api('GET', '/api/sessions?per_page=100');
        return sessions.body.find(
          (s: { active: boolean; events: { items: { type: string; data?: { reason?: string } }[] } }) =>
            !s.active && s.events.items.some((e) => e.type === 'refused' && e.data?.reason === 'pending'),
        );
      }, 'the closed session refused as pending');
      expect(refused).to.include({ authenticated: false, active: false, username: 'root' });
    } finally {
      await pending.stop();
    }
  });

  it('applies firewall rules: by priority, first match wins, by source IP, user name and hostname', async () => {
    const rule = async (body: Record<string, unknown>) => {
      const res = await world.api('POST', '/api/firewall/rules', body);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body.id as string;
    };
    const deny = await rule({
      action: 'deny',
      priority: 10,
      source_ip: '^127\\.',
      username: '.*',
      filter: { hostname: '^guarded$' },
    });
    const denied = await attempt(world.target());
    expect(denied.code).to.equal(255);
    expect(denied.stderr).to.contain(
      `gatehouse: a firewall rule of namespace ${world.namespace} denies this connection`,
    );
    // The password is never relayed to a device the firewall closes, so its user never signs in to be told.
    const password = await withPassword(world.target());
    expect(password.code).to.equal(255);
    expect(password.stderr).to.contain(NOT_SIGNED_IN);

    // A rule with a lower priority number is evaluated first and wins.
    const allowRoot = await rule({
      action: 'allow',
      priority: 5,
      source_ip: '.*',
      username: '^root$',
      filter: { hostname: '.*' },
    });
    expect((await attempt(world.target('root'))).code).to.equal(0);
    expect((await attempt(world.target('admin'))).stderr).to.contain('denies this connection');

    // Inactive rules are not evaluated.
    await world.api('PUT', `/api/firewall/rules/${deny}`, { active: false });
    expect((await attempt(world.target('admin'))).code).to.equal(0);

    // A rule for another source address does not apply.
    await world.api('PUT', `/api/firewall/rules/${deny}`, { active: true, source_ip: '^10\\.' });
    expect((await attempt(world.target('admin'))).code).to.equal(0);

    // A tag filter: the rule applies only to devices carrying the tag.
    await world.api('PUT', `/api/firewall/rules/${deny}`, { source_ip: '.*', filter: { tags: ['locked'] } });
    expect((await attempt(world.target('admin'))).code).to.equal(0);
    await world.api('PUT', `/api/devices/${world.deviceUid}/tags`, { tags: ['locked'] });
    expect((await attempt(world.target('admin'))).stderr).to.contain('denies this connection');
    await world.api('DELETE', `/api/firewall/rules/${deny}`);
    await world.api('DELETE', `/api/firewall/rules/${allowRoot}`);
    expect((await attempt(world.target('admin'))).code).to.equal(0);
  });

  it('a pathological pattern does not stall the gateway (linear-time engine)', async () => {
    const id = (
      await world.api('POST', '/api/firewall/rules', {
        action: 'deny',
        priority: 1,
        source_ip: '.*',
        username: '^(a+)+$',
        filter: { hostname: '.*' },
      })
    ).body.id;
    const started = Date.now();
    const res = await attempt(world.target(`${'a'.repeat(40)}-`));
    expect(res.code).to.equal(0);
    expect(Date.now() - started).to.be.lessThan(15_000);
    await world.api('DELETE', `/api/firewall/rules/${id}`);
  });

  it('says an offline device is offline, and reaches it again once its agent is back', async () => {
    await world.agent.stop();
    const hub = world.server.kernel.container.resolve('tunnelHub' as never) as {
      isOnline(uid: string): boolean;
    };
    for (let i = 0; i < 100 && hub.isOnline(world.deviceUid); i++)
      await new Promise((r) => setTimeout(r, 100));
    const res = await attempt(world.target());
    expect(res.code).to.equal(255);
    expect(res.stderr).to.contain(`gatehouse: device ${world.namespace}.guarded is offline`);
    expect((await withPassword(world.target())).stderr).to.contain(NOT_SIGNED_IN);
    world.agent = world.startAgent();
    await world.waitOnline();
    expect((await attempt(world.target())).code).to.equal(0);
    expect((await withPassword(world.target())).code).to.equal(0);
  });
});
