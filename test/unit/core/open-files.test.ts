import { once } from 'node:events';
import { rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import {
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

  async function listening(budget: OpenFilesBudget) {
    const server = createServer({ keepAliveTimeout: 65_000 }, (_req, res) => res.end('ok'));
    servers.push(server);
    const { log, lines } = logSink();
    const open = keepWithinOpenFiles(server, budget, log);
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
      socket.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
      const [data] = (await once(socket, 'data')) as [Buffer];
      expect(data.toString()).to.match(/^HTTP\/1.1 200/);
    }
    return { socket, closed };
  }

  const settled = (p: Promise<boolean>) =>
    Promise.race([p, new Promise((r) => setTimeout(() => r(false), 300))]);

  it('closes the idle keep-alive connections near the limit, not one that has yet to send its first request', async () => {
    const { port, open, lines } = await listening({ limit: 100, reclaimAt: 4, maxConnections: 10 });
    const idle = [await client(port, true), await client(port, true)];
    const fresh = await client(port, false);
    expect(await settled(idle[0]!.closed)).to.equal(false);
    // The fourth connection reaches `reclaimAt`: the two that answered a request go; the fresh ones stay.
    const fourth = await client(port, false);
    expect(await settled(idle[0]!.closed)).to.equal(true);
    expect(await settled(idle[1]!.closed)).to.equal(true);
    expect(await settled(fresh.closed)).to.equal(false);
    expect(await settled(fourth.closed)).to.equal(false);
    // The fresh connection's first request is answered as usual.
    fresh.socket.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
    const [data] = (await once(fresh.socket, 'data')) as [Buffer];
    expect(data.toString()).to.match(/^HTTP\/1.1 200/);
    expect(open()).to.equal(2);
    expect(lines.join('')).to.include('idle keep-alive connections are being closed');
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
