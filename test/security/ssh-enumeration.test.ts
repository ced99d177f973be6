import { expect } from 'chai';
import ssh2 from 'ssh2';
import { DEVICE_PASSWORD, GatewayWorld } from '../integration/ssh/gateway-world';
import { WebTerminalClient } from '../support/web-terminal-client';
import { registerDevice } from './world';

/** Everything an SSH client that has not signed in learns from one connection. */
interface Probe {
  /** The method list of each failure, in order: after `none`, after a key, after the password. */
  lists: (string[] | null)[];
  /** Whether the gateway said a key it knows nothing of would do (it then asks the client to sign). */
  keyWouldDo: boolean;
  banners: string[];
  outcome: string;
  /** Milliseconds from the `none` attempt to its answer (printed, not judged: timing belongs in bench/). */
  noneMs: number;
}

/** A key that no namespace lists. */
const stranger = ssh2.utils.parseKey(ssh2.utils.generateKeyPairSync('ed25519').private) as ssh2.ParsedKey;

/** An agent holding the stranger key, which says when it is asked to sign (only after the server said yes). */
class StrangerAgent extends ssh2.BaseAgent {
  asked = false;
  override getIdentities(cb: (err: Error | undefined, keys?: Buffer[]) => void): void {
    cb(undefined, [stranger.getPublicSSH()]);
  }
  override sign(
    _key: unknown,
    data: Buffer,
    opts: unknown,
    cb?: (err: Error | undefined, signature?: Buffer) => void,
  ): void {
    this.asked = true;
    const done = typeof opts === 'function' ? (opts as typeof cb) : cb;
    const signature = stranger.sign(data);
    done?.(
      signature instanceof Error ? signature : undefined,
      signature instanceof Error ? undefined : signature,
    );
  }
}

/** `none`, then the stranger key, then `password`, as `username` from the loopback address `from`. */
function probe(port: number, username: string, from: string, password: string): Promise<Probe> {
  return new Promise((resolve) => {
    const client = new ssh2.Client();
    const agent = new StrangerAgent();
    const seen: Probe = { lists: [], keyWouldDo: false, banners: [], outcome: 'closed', noneMs: 0 };
    let step = 0;
    let sent = 0;
    client.on('banner', (text: string) => seen.banners.push(text));
    client.on('ready', () => {
      seen.outcome = 'signed in';
      client.end();
    });
    client.on('error', (err: Error & { level?: string }) => {
      if (err.level !== 'agent') seen.outcome = `${err.level}: ${err.message}`;
    });
    client.on('close', () => resolve({ ...seen, keyWouldDo: agent.asked }));
    client.connect({
      host: '127.0.0.1',
      port,
      localAddress: from,
      username,
      readyTimeout: 30_000,
      authHandler: (methodsLeft, _partial, next) => {
        if (step > 0) seen.lists.push(methodsLeft);
        if (step === 1) seen.noneMs = Date.now() - sent;
        step += 1;
        if (step === 1) {
          sent = Date.now();
          return next({ type: 'none', username });
        }
        if (step === 2) return next({ type: 'agent', username, agent });
        if (step === 3) return next({ type: 'password', username, password });
        return next(false as unknown as ssh2.AuthenticationType);
      },
    });
  });
}

/**
 * Until a user has signed in, the SSH gateway told apart an unknown namespace, an unknown device, a device that is
 * offline, pending or behind a firewall rule, and a wrong password, each with its own banner (and a method list
 * that came later the more there was to look up), so anyone could enumerate the namespaces and devices of an
 * installation. Now every one of them is answered alike, method lists and banners and all; a user who signed in with
 * a key of the namespace is told the reason, and the web terminal's member only of their own namespace.
 */
describe('security: what the SSH gateway tells before sign-in', function () {
  this.timeout(180_000);
  let world: GatewayWorld;
  const targets: Record<string, string> = {};
  let key: { file: string; data: string };

  before(async () => {
    world = await GatewayWorld.start({ deviceName: 'present' });
    const owned = { tenant: world.owner.tenant, ownerToken: world.owner.token };
    const nameOf = async (uid: string) => (await world.api('GET', `/api/devices/${uid}`)).body.name as string;
    // Accepted, but its agent never connects: offline. And one nobody accepted.
    const offline = await registerDevice(world.server, owned, { accept: true });
    const pending = await registerDevice(world.server, owned);
    const rule = await world.api('POST', '/api/firewall/rules', {
      action: 'deny',
      priority: 1,
      source_ip: '.*',
      username: '^walled$',
      filter: { hostname: '.*' },
    });
    expect(rule.status, JSON.stringify(rule.body)).to.equal(200);
    Object.assign(targets, {
      'unknown namespace': 'root@nowhere.present',
      'unknown device': world.target('root', 'absent'),
      'unknown uid': `root@${'e'.repeat(64)}`,
      'offline device': world.target('root', await nameOf(offline.uid)),
      'pending device': world.target('root', await nameOf(pending.uid)),
      'firewall rule': world.target('walled'),
    });
    key = await world.keyForEveryHost('enumeration');
  });
  after(async () => {
    await world?.stop();
  });

  it('answers an unknown namespace, device or uid, an offline, pending or walled device and a wrong password alike', async () => {
    const probes: Record<string, Probe> = {};
    let n = 10;
    // Each from a source of its own, so that each meets the same penalties (none yet).
    for (const [what, target] of Object.entries(targets))
      probes[what] = await probe(world.server.sshPort, target, `127.0.0.${n++}`, DEVICE_PASSWORD);
    probes['wrong password'] = await probe(
      world.server.sshPort,
      world.target(),
      `127.0.0.${n++}`,
      'not-the-password',
    );
    for (const [what, p] of Object.entries(probes))
      console.log(`      ${what}: the method list answered in ${p.noneMs} ms`);
    const { noneMs: _ms, ...reference } = probes['wrong password'] as Probe;
    expect(reference.lists).to.deep.equal([
      ['publickey', 'password'],
      ['publickey', 'password'],
      ['publickey', 'password'],
    ]);
    expect(reference.keyWouldDo).to.equal(true);
    expect(reference.outcome).to.match(
      /^client-authentication: All configured authentication methods failed/,
    );
    expect(reference.banners.join('')).to.contain('gatehouse: not signed in');
    for (const [what, p] of Object.entries(probes)) {
      const { noneMs: _noneMs, ...answers } = p;
      expect(answers, what).to.deep.equal(reference);
    }
  });

  it('tells a malformed address at once, as it names nothing', async () => {
    const p = await probe(world.server.sshPort, 'just-a-name', '127.0.0.30', DEVICE_PASSWORD);
    expect(p.banners.join('')).to.contain('is not a device address');
  });

  it('tells a user signed in with a key of the namespace why the device cannot be reached', async () => {
    const reasons: Record<string, RegExp> = {
      'offline device': /gatehouse: device \S+ is offline/,
      'pending device': /gatehouse: device \S+ is waiting to be accepted/,
      'firewall rule': /gatehouse: a firewall rule of namespace \S+ denies this connection/,
    };
    for (const [what, pattern] of Object.entries(reasons)) {
      const res = await world.sshKey(key.file, ['true'], targets[what]);
      expect(res.code, what).to.equal(255);
      expect(res.stderr, what).to.match(pattern);
    }
    // What does not exist stays unknown, key or not.
    for (const what of ['unknown namespace', 'unknown device', 'unknown uid']) {
      const res = await world.sshKey(key.file, ['true'], targets[what]);
      expect(res.code, what).to.equal(255);
      expect(res.stderr, what).to.contain('gatehouse: not signed in');
      expect(res.stderr, what).to.not.match(/not found|no device with uid/);
    }
    // And the key signs in to the device that is there.
    const res = await world.sshKey(key.file, ['echo', 'here'], world.target());
    expect(res.code, res.stderr).to.equal(0);
  });

  it("does not tell a web terminal member whether another namespace's device exists", async () => {
    // A second namespace with a device, of which the member signed in to the first knows nothing.
    const created = await world.api('POST', '/api/namespaces', { name: 'elsewhere' });
    expect(created.status, JSON.stringify(created.body)).to.equal(200);
    const swapped = await world.server.api('GET', `/api/auth/token/${created.body.tenant_id}`, {
      token: world.owner.token,
    });
    const device = await registerDevice(
      world.server,
      { tenant: created.body.tenant_id, ownerToken: swapped.body.token },
      { accept: true },
    );
    const name = (await world.server.api('GET', `/api/devices/${device.uid}`, { token: swapped.body.token }))
      .body.name as string;
    const answer = async (target: string) => {
      const res = await world.server.api('POST', '/api/terminal/tickets', {
        token: world.owner.token,
        body: { target },
      });
      expect(res.status).to.equal(200);
      const client = new WebTerminalClient(
        `${world.server.url.replace('http', 'ws')}/ws/ssh?ticket=${res.body.ticket}`,
      );
      await client.closed;
      // The address echoed back is the one asked for: compared without it.
      return client.controls
        .find((c) => c.type === 'error')
        ?.message?.replace(/"[^"]*"/g, '"…"')
        .replace(/[0-9a-f]{64}/g, '<uid>');
    };
    expect(await answer(`root@elsewhere.${name}`)).to.equal(await answer(`root@nowhere.${name}`));
    expect(await answer(`root@${device.uid}`)).to.equal(await answer(`root@${'d'.repeat(64)}`));
    // In the member's own namespace, a device that cannot be reached is named, with its reason.
    expect(await answer(targets['offline device'] as string)).to.match(/^device \S+ is offline$/);
  });
});
