import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server, Socket } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { GatewayWorld, UPSTREAMS } from './gateway-world';

/** A TCP echo service standing for something listening on the device side. */
async function echoServer(): Promise<{ server: Server; port: number }> {
  const server = createServer((s) => s.pipe(s));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as { port: number }).port };
}

async function freePort(): Promise<number> {
  const s = createServer().listen(0, '127.0.0.1');
  await once(s, 'listening');
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

async function connectWhenListening(port: number): Promise<Socket> {
  for (let i = 0; i < 200; i++) {
    const sock = new Socket();
    const ok = await new Promise<boolean>((resolve) => {
      sock.once('connect', () => resolve(true));
      sock.once('error', () => resolve(false));
      sock.connect(port, '127.0.0.1');
    });
    if (ok) return sock;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listens on ${port}`);
}

/** The port OpenSSH reports for `-R 0:...`: "Allocated port N for remote forward to ...". */
function allocatedPort(ssh: ChildProcess): Promise<number> {
  // A listener, not an iterator: the pipe stays open and drained, so a later line cannot stall or end ssh.
  return new Promise((resolve, reject) => {
    let said = '';
    ssh.stderr?.on('data', (chunk: Buffer) => {
      said += chunk.toString();
      const found = /Allocated port (\d+) for remote forward/.exec(said);
      if (found) resolve(Number(found[1]));
    });
    ssh.once('exit', (code) => reject(new Error(`ssh ended (${code}) without a remote port: ${said}`)));
  });
}

async function roundTrip(sock: Socket, text: string): Promise<string> {
  sock.write(text);
  let got = '';
  for await (const chunk of sock) {
    got += chunk.toString();
    if (got.length >= text.length) break;
  }
  return got;
}

for (const upstream of UPSTREAMS) {
  describe(`ssh through the gateway: forwarding, agent forwarding, several channels, many sessions, through ${upstream.name}`, function () {
    this.timeout(120_000);
    let world: GatewayWorld;
    let keyFile: string;
    let echo: { server: Server; port: number };
    const children: ChildProcess[] = [];

    before(async () => {
      world = await GatewayWorld.start({ deviceName: 'channels', agentEnv: upstream.agentEnv });
      keyFile = (await world.keyForEveryHost('channels')).file;
      echo = await echoServer();
    });
    after(async () => {
      for (const c of children) c.kill('SIGKILL');
      echo?.server.close();
      await world?.stop();
    });

    const background = (args: string[], env: NodeJS.ProcessEnv = process.env) => {
      const child = spawn('ssh', args, { stdio: ['ignore', 'ignore', 'pipe'], env });
      children.push(child);
      return child;
    };
    const base = () => [
      ...world.sshOptions(),
      ...world.keyOptions(keyFile),
      '-p',
      String(world.server.sshPort),
    ];
    const host = () => `${world.target()}@127.0.0.1`;

    it(`reaches the agent through ${upstream.name}`, async () => {
      expect(await world.streamKinds()).to.deep.equal(upstream.kinds);
    });

    it('forwards a local port (-L) to a listener on the device side', async () => {
      const port = await freePort();
      const ssh = background([
        ...base(),
        '-N',
        '-o',
        'ExitOnForwardFailure=yes',
        '-L',
        `${port}:127.0.0.1:${echo.port}`,
        host(),
      ]);
      const sock = await connectWhenListening(port);
      expect(await roundTrip(sock, 'through -L')).to.equal('through -L');
      sock.destroy();
      ssh.kill();
    });

    it('forwards dynamically (-D, SOCKS5) to the device side', async () => {
      const port = await freePort();
      const ssh = background([...base(), '-N', '-D', `127.0.0.1:${port}`, host()]);
      const sock = await connectWhenListening(port);
      sock.write(Buffer.from([5, 1, 0]));
      const [hello] = (await once(sock, 'data')) as [Buffer];
      expect([...hello]).to.deep.equal([5, 0]);
      const req = Buffer.from([5, 1, 0, 1, 127, 0, 0, 1, echo.port >> 8, echo.port & 0xff]);
      sock.write(req);
      const [reply] = (await once(sock, 'data')) as [Buffer];
      expect(reply[1]).to.equal(0);
      expect(await roundTrip(sock, 'through -D')).to.equal('through -D');
      sock.destroy();
      ssh.kill();
    });

    it('forwards the user agent (-A): the device lists the key held by the user ssh-agent', async () => {
      const socket = path.join(world.dir, 'agent.sock');
      const agent = spawn('ssh-agent', ['-D', '-a', socket], { stdio: 'ignore' });
      children.push(agent);
      for (let i = 0; i < 100; i++) {
        try {
          execFileSync('ssh-add', ['-l'], { env: { SSH_AUTH_SOCK: socket }, stdio: 'ignore' });
          break;
        } catch (err) {
          if ((err as { status?: number }).status === 1) break; // running, no identities yet
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      const forwarded = world.newKey('forwarded-key');
      execFileSync('ssh-add', [forwarded.file], { env: { SSH_AUTH_SOCK: socket }, stdio: 'ignore' });
      const withAgent = await new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn('ssh', [...base(), '-A', host(), 'ssh-add', '-L'], {
          env: { ...process.env, SSH_AUTH_SOCK: socket },
        });
        let out = '';
        child.stdout.on('data', (c: Buffer) => {
          out += c.toString();
        });
        child.on('close', (code) => resolve({ code, out }));
      });
      expect(withAgent.code).to.equal(0);
      expect(withAgent.out).to.contain(Buffer.from(forwarded.data, 'base64').toString().split(' ')[1]);
      agent.kill();
    });

    it('runs several channels over one connection (ControlMaster)', async () => {
      const control = path.join(world.dir, 'cm.sock');
      const master = background([...base(), '-M', '-S', control, '-N', host()]);
      for (let i = 0; i < 200; i++) {
        try {
          execFileSync('ssh', ['-S', control, '-O', 'check', 'x'], { stdio: 'ignore' });
          break;
        } catch {
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      const runs = await Promise.all(
        [1, 2, 3, 4, 5].map((n) =>
          world.run('ssh', ['-S', control, '-p', String(world.server.sshPort), host(), `echo channel-${n}`]),
        ),
      );
      runs.forEach((r, i) => {
        expect(r.code).to.equal(0);
        expect(r.stdout.toString()).to.equal(`channel-${i + 1}\n`);
      });
      const sessions = await world.api('GET', '/api/sessions?per_page=100');
      const shared = sessions.body.find(
        (s: { active: boolean; events: { seats: number[] } }) => s.active && s.events.seats.length >= 5,
      );
      expect(shared, 'one session with five seats').to.exist;
      master.kill();
    });

    it('serves 20 sessions at once', async function () {
      // Each session starts the account's shell, as sshd would, and bash reads root's ~/.bashrc for a command whose
      // input is a socket. On a host whose ~/.bashrc starts pyenv (this CI machine's does) that is about 100
      // processes per session, 2,000 for the twenty: on two busy cores that alone has taken over 30 s, the
      // harness's usual limit for one command. The limit here is a guard against a hang, not the measure; the
      // gateway's own speed is measured in bench/ssh/run.ts.
      this.timeout(240_000);
      const runs = await Promise.all(
        Array.from({ length: 20 }, (_, n) =>
          world.sshPassword(['echo', `session-${n}`], [], world.target(), { timeoutMs: 180_000 }),
        ),
      );
      runs.forEach((r, n) => {
        expect(r.code, r.stderr).to.equal(0);
        expect(r.stdout.toString()).to.equal(`session-${n}\n`);
      });
    });

    it('keeps a long-running command with client keepalives going, and ends it on close from the API', async () => {
      const long = await world.run(
        'ssh',
        [
          ...base(),
          '-o',
          'ServerAliveInterval=1',
          '-o',
          'ServerAliveCountMax=2',
          host(),
          'sleep 3; echo finished',
        ],
        { timeoutMs: 30_000 },
      );
      expect(long.code).to.equal(0);
      expect(long.stdout.toString()).to.equal('finished\n');

      const child = spawn('ssh', [...base(), host(), 'sleep 60'], { stdio: ['ignore', 'ignore', 'pipe'] });
      children.push(child);
      let stderr = '';
      child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
      });
      let live: { uid: string } | undefined;
      for (let i = 0; i < 100 && !live; i++) {
        const list = await world.api('GET', '/api/sessions?per_page=100');
        live = list.body.find(
          (s: {
            active: boolean;
            authenticated: boolean;
            events: { items: { type: string; data?: { command?: string } }[] };
          }) => s.active && s.authenticated && s.events.items.some((e) => e.data?.command === 'sleep 60'),
        );
        if (!live) await new Promise((r) => setTimeout(r, 100));
      }
      expect(live, 'the live session').to.exist;
      const exited = once(child, 'exit');
      // A reason too long is refused; one with a control character reaches the terminal made harmless.
      const tooLong = await world.api('POST', `/api/sessions/${live?.uid}/close`, {
        reason: 'x'.repeat(201),
      });
      expect(tooLong.status).to.equal(400);
      const closed = await world.api('POST', `/api/sessions/${live?.uid}/close`, {
        device: world.deviceUid,
        reason: 'maintenance \u001b[2Jwindow',
      });
      expect(closed.status).to.equal(200);
      await exited;
      expect(stderr).to.contain(`gatehouse: ${world.owner.user} closed this session: maintenance ?[2Jwindow`);
      const after = await world.api('GET', `/api/sessions/${live?.uid}`);
      expect(after.body.active).to.equal(false);
    });

    it('reports a command killed by a signal SSH has no name for, and the device stays reachable', async () => {
      // SIGVTALRM is not in RFC 4254's list: the agent reports it as KILL, where ssh2 used to throw and end it.
      const killed = await world.run('ssh', [...base(), host(), 'echo before; kill -s VTALRM $$']);
      expect(killed.stdout.toString()).to.equal('before\n');
      expect(killed.code).to.equal(255);
      const again = await world.run('ssh', [...base(), host(), 'echo still-up']);
      expect(again.code, again.stderr).to.equal(0);
      expect(again.stdout.toString()).to.equal('still-up\n');
    });

    it('carries a remote forward (-R): a connection to the device-side port reaches the user side', async () => {
      // Port 0: the device picks a free port and the gateway hands it back, which OpenSSH prints. A port chosen
      // here beforehand could be taken by a parallel suite before the device binds it.
      const ssh = background([
        ...base(),
        '-N',
        '-o',
        'ExitOnForwardFailure=yes',
        '-R',
        `0:127.0.0.1:${echo.port}`,
        host(),
      ]);
      const port = await allocatedPort(ssh);
      const sock = await connectWhenListening(port);
      expect(await roundTrip(sock, 'through -R')).to.equal('through -R');
      sock.destroy();
      ssh.kill();
    });
  });
}
