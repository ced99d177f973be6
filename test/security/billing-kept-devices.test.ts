import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { baseSshOptions, run } from '../integration/agent/openssh-client';
import { agentAuthRequest } from '../support/device-keys';
import { keyOptions } from '../support/openssh';
import { type LoginAnswer, startServer, type TestServer } from '../support/server';
import { billingSettings, type FakeStripe, startFakeStripe } from '../support/stripe';

/**
 * In the cloud edition, once a subscription has ended and until the owner chooses, the devices kept reachable are
 * the most used ones (`GET /api/billing/devices-most-used`). Refused SSH attempts, which anyone who knows a device's
 * address can make without a password, counted as use: two of them moved a device in and a used one out. Only
 * sessions that signed in count now.
 */
describe('security: which devices stay reachable after a subscription ends (cloud)', function () {
  this.timeout(90_000);
  let stripe: FakeStripe;
  let server: TestServer;
  let owner: LoginAnswer;
  let keyDir: string;
  let keyFile: string;
  const devices: { uid: string; name: string }[] = [];

  before(async () => {
    // Billing calls answer only on a server that bills through Stripe (here the local one).
    stripe = await startFakeStripe();
    server = await startServer({
      edition: 'cloud',
      overrides: { billing: billingSettings(stripe) },
    });
    owner = await server.setup();
    for (const n of [1, 2, 3, 4]) {
      const res = await server.api(
        'POST',
        '/api/devices/auth',
        agentAuthRequest({
          tenant: owner.tenant,
          hostname: `kept-${n}`,
          mac: `02:00:00:00:30:0${n}`,
          keyLabel: `kept-key-${n}`,
        }),
      );
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      devices.push(res.body as { uid: string; name: string });
    }
    // Three are accepted within the free devices; the fourth was accepted while a subscription ran, which has ended
    // since (no subscription now, four accepted devices, three free).
    for (const d of devices.slice(0, 3)) {
      const accepted = await server.api('PATCH', `/api/devices/${d.uid}/accept`, { token: owner.token });
      expect(accepted.status, JSON.stringify(accepted.body)).to.equal(200);
    }
    const db = server.kernel.container.cradle.db;
    await db('devices').where({ uid: devices[3]?.uid }).update({ status: 'accepted' });
    // Each of the first three had one session that signed in, as the gateway records one.
    const sessions = server.kernel.container.cradle.sessions;
    for (const d of devices.slice(0, 3)) {
      const uid = await sessions.open({
        tenantId: owner.tenant,
        deviceUid: d.uid,
        username: 'root',
        ip: '192.0.2.10',
        type: 'term',
        recorded: false,
      });
      await sessions.update(owner.tenant, uid, { authenticated: true });
    }
    // The owner's key of the namespace: signed in with it, the gateway says why a device cannot be reached.
    keyDir = mkdtempSync(path.join(tmpdir(), 'gatehouse-kept-'));
    keyFile = path.join(keyDir, 'id_ed25519');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', keyFile]);
    const key = await server.api('POST', '/api/sshkeys/public-keys', {
      token: owner.token,
      body: {
        data: Buffer.from(readFileSync(`${keyFile}.pub`, 'utf8')).toString('base64'),
        filter: { hostname: '.*' },
        name: 'owner-key',
        username: '.*',
      },
    });
    expect(key.status, JSON.stringify(key.body)).to.equal(200);
  });
  after(async () => {
    await server?.stop();
    await stripe?.stop();
    if (keyDir) rmSync(keyDir, { recursive: true, force: true });
  });

  /**
   * An SSH attempt through the gateway with the real OpenSSH client: an outsider's, with no credential to offer,
   * or the owner's, with the namespace's key.
   */
  const attempt = (device: string, withKey = false) =>
    run(
      'ssh',
      [
        // The gateway's answers are banners, which OpenSSH prints at its INFO level (its first -o wins).
        '-o',
        'LogLevel=INFO',
        ...baseSshOptions(server.sshPort),
        ...(withKey ? keyOptions(keyFile) : ['-o', 'BatchMode=yes', '-o', 'PubkeyAuthentication=no']),
        `root@${owner.user}.${device}@127.0.0.1`,
        'true',
      ],
      { timeoutMs: 20_000 },
    );

  const kept = async () => {
    const res = await server.api('GET', '/api/billing/devices-most-used', { token: owner.token });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body as { uid: string; sessions: number }[];
  };

  it('keeps the devices with signed-in sessions, whatever refused attempts an outsider makes', async () => {
    const [a, b, c, d] = devices as [
      (typeof devices)[0],
      (typeof devices)[0],
      (typeof devices)[0],
      (typeof devices)[0],
    ];
    expect((await kept()).map((k) => k.uid)).to.have.members([a.uid, b.uid, c.uid]);

    // Two refused attempts at the fourth device by an outsider: told nothing of the device, yet each is a session
    // row that never signed in.
    for (let i = 0; i < 2; i++) {
      const refused = await attempt(d.name);
      expect(refused.code).to.equal(255);
      expect(refused.stderr).to.contain('Permission denied');
      expect(refused.stderr).to.not.contain('subscription');
    }
    // Refused before any credential, the client is gone before the refusal is stored: wait for both rows.
    const refusedRows = async () =>
      server.kernel.container.cradle.db('sessions').where({ device_uid: d.uid });
    for (let waited = 0; (await refusedRows()).length < 2 && waited < 5_000; waited += 100) await sleep(100);
    expect((await refusedRows()).map((r) => r.authenticated)).to.deep.equal([false, false]);

    const after = await kept();
    expect(after.map((k) => k.uid)).to.have.members([a.uid, b.uid, c.uid]);
    expect(after.map((k) => k.sessions)).to.deep.equal([1, 1, 1]);
    // Signed in with the owner's key: the fourth is refused for the subscription, the used devices still pass the
    // billing rule (and meet the next: no agent here).
    const refused = await attempt(d.name, true);
    expect(refused.code).to.equal(255);
    expect(refused.stderr).to.contain('the subscription of this namespace has ended');
    for (const device of [a, b, c]) {
      const through = await attempt(device.name, true);
      expect(through.stderr).to.not.contain('subscription');
      expect(through.stderr).to.contain(`device ${owner.user}.${device.name} is offline`);
    }
  });
});
