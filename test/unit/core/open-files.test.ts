import { once } from 'node:events';
import { rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import {
  FIRST_REQUEST_GRACE_MS,
  keepWithinOpenFiles,
  type OpenFilesBudget,
  openFilesBudget,
  openFilesLimit,
} from '../../../core/http/open-files';
import { createLogger } from '../../../core/log';

/**
 * The public listener within the process's open files (core/http/open-files.ts): idle keep-alive connections are
 * closed near the limit, and past it new connections are refused, instead of the process failing accept with
 * EMFILE, as it did in the reconnect storm of 10,000 agents.
 */
describe('open files: the public listener keeps within the limit', () => {
  const servers: Server[] = [];
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
  });

  function logSink() {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    return { log: createLogger({ log: { level: 'info', pretty: false } }, stream as never), lines };
  }

  async function listening(budget: OpenFilesBudget, now: () => number = Date.now) {
    const server = createServer({ keepAliveTimeout: 65_000 }, (_req, res) => res.end('ok'));
    servers.push(server);
    const { log, lines } = logSink();
    const open = keepWithinOpenFiles(server, budget, log, now);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return { port: (server.address() as AddressInfo).port, open, lines };
  }

  /** A client connection; with `request`, it has sent one request and read the answer, and stays open. */
  async function client(port: number, request: boolean) {
    const socket = connect(port, '127.0.0.1');
    sockets.push(socket);
    const closed = once(socket, 'close').then(() => true);
    socket.on('error', () => {});
    await once(socket, 'connect');
    if (request) {
      await ask(socket);
    }
    return { socket, closed };
  }

  /** One request on `socket`, answered. */
  async function ask(socket: Socket) {
    socket.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
    const [data] = (await once(socket, 'data')) as [Buffer];
    expect(data.toString()).to.match(/^HTTP\/1.1 200/);
  }

  const settled = (p: Promise<boolean>) =>
    Promise.race([p, new Promise((r) => setTimeout(() => r(false), 300))]);

  it('closes the longest-idle keep-alive connections near the limit, not one that has yet to send its first request', async () => {
    const { port, open, lines } = await listening({ limit: 100, reclaimAt: 4, maxConnections: 10 });
    const first = await client(port, true);
    const second = await client(port, true);
    // The first connection's second request makes the second connection the one idle the longest.
    await ask(first.socket);
    const fresh = await client(port, false);
    expect(await settled(second.closed)).to.equal(false);
    // The fourth connection reaches `reclaimAt`: idle ones go, the longest idle first, until three quarters of it
    // are left; the fresh ones stay.
    const fourth = await client(port, false);
    expect(await settled(second.closed)).to.equal(true);
    expect(await settled(first.closed)).to.equal(false);
    expect(await settled(fresh.closed)).to.equal(false);
    expect(await settled(fourth.closed)).to.equal(false);
    // The fresh connection's first request is answered as usual.
    await ask(fresh.socket);
    expect(open()).to.equal(3);
    expect(lines.join('')).to.include('idle keep-alive connections are being closed');
  });

  it('closes a connection silent since it was accepted, past the grace for a first request, before idle ones', async () => {
    let clock = 1_000_000;
    const { port, open } = await listening({ limit: 100, reclaimAt: 3, maxConnections: 10 }, () => clock);
    const silent = await client(port, false);
    clock += FIRST_REQUEST_GRACE_MS - 1;
    const young = await client(port, false);
    clock += 2;
    const idle = await client(port, true);
    // The third connection reaches `reclaimAt`. The first has sent nothing for longer than the grace and goes;
    // that leaves the listener at three quarters of `reclaimAt` (2), so the idle one stays, and so does the young
    // silent one.
    expect(await settled(silent.closed)).to.equal(true);
    expect(await settled(idle.closed)).to.equal(false);
    expect(await settled(young.closed)).to.equal(false);
    expect(open()).to.equal(2);
  });

  it('keeps a connection upgraded after a request, and one with a pipelined request still unanswered', async () => {
    const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
      // The second request of a pipelined pair is answered late.
      if (req.url === '/slow') setTimeout(() => res.end('slow'), 600);
      else res.end('ok');
    });
    servers.push(server);
    server.on('upgrade', (_req, socket: Socket) => {
      sockets.push(socket);
      socket.write('HTTP/1.1 101 Switching Protocols\r\nupgrade: test\r\nconnection: upgrade\r\n\r\n');
    });
    const { log } = logSink();
    const open = keepWithinOpenFiles(server, { limit: 100, reclaimAt: 4, maxConnections: 10 }, log);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as AddressInfo).port;
    // Answers one request, then asks for an upgrade on the same connection, as a proxy's pooled connection may.
    const upgraded = await client(port, true);
    upgraded.socket.write('GET /tunnel HTTP/1.1\r\nhost: x\r\nconnection: upgrade\r\nupgrade: test\r\n\r\n');
    const [switched] = (await once(upgraded.socket, 'data')) as [Buffer];
    expect(switched.toString()).to.match(/^HTTP\/1.1 101/);
    // Two requests in one write: the first is answered at once, the second later.
    const pipelined = await client(port, false);
    let answered = '';
    pipelined.socket.on('data', (chunk: Buffer) => {
      answered += chunk.toString();
    });
    pipelined.socket.write('GET / HTTP/1.1\r\nhost: x\r\n\r\nGET /slow HTTP/1.1\r\nhost: x\r\n\r\n');
    while (!answered.includes('ok')) await new Promise((resolve) => setTimeout(resolve, 10));
    const idle = await client(port, true);
    await client(port, false);
    expect(open()).to.equal(4);
    expect(await settled(idle.closed)).to.equal(true);
    expect(await settled(upgraded.closed)).to.equal(false);
    expect(await settled(pipelined.closed)).to.equal(false);
    while (!answered.includes('slow') && !pipelined.socket.destroyed) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(answered).to.include('slow');
  });

  it('refuses new connections past maxConnections and keeps the ones it holds', async () => {
    const { port, open, lines } = await listening({ limit: 100, reclaimAt: 100, maxConnections: 3 });
    const held = [await client(port, false), await client(port, false), await client(port, false)];
    const refused = await client(port, false);
    expect(await settled(refused.closed)).to.equal(true);
    for (const h of held) expect(await settled(h.closed)).to.equal(false);
    expect(open()).to.equal(3);
    expect(lines.join('')).to.include('connections refused at the limit on open files');
  });

  it('reads the soft limit from /proc, and leaves a tenth of it (at least 256) to the rest of the process', () => {
    const file = join(tmpdir(), `gatehouse-limits-${process.pid}`);
    writeFileSync(
      file,
      'Limit                     Soft Limit           Hard Limit           Units     \n' +
        'Max open files            20000                40000                files     \n',
    );
    expect(openFilesLimit(file)).to.equal(20_000);
    writeFileSync(file, 'Max open files            unlimited            unlimited            files\n');
    expect(openFilesLimit(file)).to.equal(Number.MAX_SAFE_INTEGER);
    rmSync(file);
    expect(openFilesLimit(join(tmpdir(), 'gatehouse-no-such-limits'))).to.equal(undefined);
    expect(openFilesBudget(20_000)).to.deep.equal({
      limit: 20_000,
      reclaimAt: 14_400,
      maxConnections: 18_000,
    });
    expect(openFilesBudget(1024)).to.deep.equal({ limit: 1024, reclaimAt: 614, maxConnections: 768 });
    if (process.platform === 'linux') expect(openFilesLimit()).to.be.greaterThan(0);
  });
});
