import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { Duplex } from 'node:stream';
import { INITIAL_WINDOW } from '@gatehouse/protocol/mux';
import { expect } from 'chai';
import { encodeFrame, FrameType } from '../../../protocol/mux/frame';
import { echo, readAll, TunnelPair } from './mux-fixture';

const sha = (buf: Buffer) => createHash('sha256').update(buf).digest('hex');

describe('agent/mux over a WebSocket', function () {
  this.timeout(15_000);
  let pair: TunnelPair;

  beforeEach(async () => {
    pair = await TunnelPair.start();
  });
  afterEach(async () => {
    await pair.stop();
  });

  it('hands the agent the header the server opened the stream with', async () => {
    const headers: unknown[] = [];
    const agentClosed: Promise<unknown>[] = [];
    const { tunnel } = await pair.connect((header, stream) => {
      headers.push(header);
      agentClosed.push(once(stream, 'close'));
      stream.resume();
      stream.end();
    });
    for (const header of [{ kind: 'tcp', host: '10.0.0.5', port: 8080 }, { kind: 'ssh' }] as const) {
      const stream = await tunnel.open(header);
      stream.end();
      await readAll(stream);
    }
    expect(headers).to.deep.equal([{ kind: 'tcp', host: '10.0.0.5', port: 8080 }, { kind: 'ssh' }]);
    await Promise.all(agentClosed);
  });

  it('half-closes: each direction ends on its own', async () => {
    let agentStream: Duplex | undefined;
    const { tunnel } = await pair.connect((_header, stream) => {
      agentStream = stream;
    });
    const stream = await tunnel.open({ kind: 'ssh' });
    const agentGot = readAll(agentStream!);
    stream.end('request');
    expect((await agentGot).toString()).to.equal('request');
    // The server's direction is finished, the agent's is still open.
    agentStream!.write('reply part 1, ');
    agentStream!.end('part 2');
    const closed = once(stream, 'close');
    expect((await readAll(stream)).toString()).to.equal('reply part 1, part 2');
    await closed;
    expect(tunnel.streamCount).to.equal(0);
  });

  it('runs many concurrent streams without mixing their bytes', async () => {
    const { tunnel } = await pair.connect(echo);
    const results = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const stream = await tunnel.open({ kind: 'ssh' });
        const sent = randomBytes(1000 + i * 517);
        const received = readAll(stream);
        stream.end(sent);
        return sha(await received) === sha(sent);
      }),
    );
    expect(results.every(Boolean)).to.equal(true);
    expect(results).to.have.length(200);
  });

  it('stops the sender at the window while the reader does not read, then delivers everything', async () => {
    let agentStream: Duplex | undefined;
    const { tunnel } = await pair.connect((_header, stream) => {
      agentStream = stream;
      stream.pause();
    });
    const stream = await tunnel.open({ kind: 'ssh' });
    const total = 8 * INITIAL_WINDOW;
    const sent = randomBytes(total);
    let offset = 0;
    // Write until the stream says stop, and keep writing on 'drain' until all is queued.
    const writer = new Promise<void>((resolve) => {
      const writeMore = () => {
        while (offset < total) {
          const chunk = sent.subarray(offset, offset + 16 * 1024);
          offset += chunk.length;
          if (!stream.write(chunk)) return void stream.once('drain', writeMore);
        }
        stream.end();
        resolve();
      };
      writeMore();
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The agent end holds at most one window plus its readable buffer; the rest waits
    // in the server end's writable side, not in flight.
    expect(agentStream!.readableLength).to.be.at.most(INITIAL_WINDOW + 64 * 1024);
    expect(stream.writableNeedDrain).to.equal(true);
    expect(offset).to.be.below(total);
    const received = readAll(agentStream!);
    agentStream!.resume();
    await writer;
    expect(sha(await received)).to.equal(sha(sent));
    agentStream!.end();
    await readAll(stream);
  });

  it("carries 16 MiB from the agent intact through its reused frame buffers, however the server's reads come", async () => {
    // With the zero mask of a private tunnel the socket holds the agent's frame buffers themselves until written.
    const sent = randomBytes(16 * 1024 * 1024);
    const { tunnel } = await pair.connect(
      (_header, stream) => {
        // Odd sizes, so frames join pieces of several writes and end mid-write; every buffer goes back to the pool
        // and is filled again while the frames before it may still be in flight.
        let offset = 0;
        const writeMore = () => {
          while (offset < sent.length) {
            const size = 1 + ((offset * 7919) % 40_000);
            const chunk = sent.subarray(offset, offset + size);
            offset += chunk.length;
            if (!stream.write(chunk)) return void stream.once('drain', writeMore);
          }
          stream.end();
        };
        stream.resume();
        writeMore();
      },
      { zeroMask: true },
    );
    const stream = await tunnel.open({ kind: 'ssh' });
    stream.end();
    const chunks: Buffer[] = [];
    // The server reads in bursts with pauses between, so the agent's sends wait on the window and the socket.
    stream.on('data', (chunk: Buffer) => {
      chunks.push(Buffer.from(chunk));
      if (chunks.length % 50 === 0) {
        stream.pause();
        setTimeout(() => stream.resume(), 5);
      }
    });
    await once(stream, 'end');
    expect(sha(Buffer.concat(chunks))).to.equal(sha(sent));
  });

  it('keeps frame-sized buffers for bulk data only: small frames take buffers of their own size', async () => {
    // The agent end's frame buffers are data frame sized (a 9-byte header and 16 KiB); count the ones it asks for.
    const frameSized = 9 + 16 * 1024;
    const original = Buffer.allocUnsafeSlow;
    let frameBuffers = 0;
    Buffer.allocUnsafeSlow = (size: number) => {
      if (size === frameSized) frameBuffers++;
      return original(size);
    };
    try {
      // The zero mask of a private tunnel, where the agent joins data into frames of its own.
      const { tunnel } = await pair.connect(echo, { zeroMask: true });
      // Small echoes, one stream after another: a keystroke's worth each.
      for (let i = 0; i < 50; i++) {
        const stream = await tunnel.open({ kind: 'ssh' });
        stream.end(Buffer.from(`key ${i}`));
        expect((await readAll(stream)).toString()).to.equal(`key ${i}`);
      }
      expect(frameBuffers).to.equal(0);
      // Bulk data does use them, and reuses them: far fewer than the frames sent.
      const bulk = randomBytes(8 * 1024 * 1024);
      const stream = await tunnel.open({ kind: 'ssh' });
      stream.end(bulk);
      expect(sha(await readAll(stream))).to.equal(sha(bulk));
      expect(frameBuffers).to.be.within(1, 64);
    } finally {
      Buffer.allocUnsafeSlow = original;
    }
  });

  it('answers ping with a round-trip time', async () => {
    const { tunnel, agent } = await pair.connect(echo);
    const rtt = await tunnel.ping();
    expect(rtt).to.be.a('number').and.to.be.at.least(0);
    expect(await agent.ping()).to.be.at.least(0);
  });

  it('rejects open with the reason when the agent refuses the stream', async () => {
    const { tunnel } = await pair.connect(async () => {
      throw new Error('connect ECONNREFUSED 127.0.0.1:1');
    });
    let error: Error | undefined;
    await tunnel.open({ kind: 'tcp', host: '127.0.0.1', port: 1 }).catch((e: Error) => {
      error = e;
    });
    expect(error?.message).to.equal('connect ECONNREFUSED 127.0.0.1:1');
    expect(tunnel.closed).to.equal(false);
    expect(await tunnel.ping()).to.be.at.least(0);
  });

  it('gives up on an open the agent never answers and resets the stream there', async () => {
    let agentStream: Duplex | undefined;
    const { tunnel } = await pair.connect(
      (_header, stream) =>
        new Promise<void>(() => {
          agentStream = stream;
          stream.on('error', () => {});
        }),
    );
    const started = Date.now();
    const error = await tunnel.open({ kind: 'ssh' }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.message).to.equal('stream open timed out');
    expect(Date.now() - started).to.be.at.least(2900);
    // once() would reject on the stream's 'error' (the reset reason); only the close matters.
    if (!agentStream!.destroyed) await new Promise((resolve) => agentStream!.once('close', resolve));
    expect(agentStream!.destroyed).to.equal(true);
    expect(tunnel.streamCount).to.equal(0);
    expect(tunnel.closed).to.equal(false);
  });

  it('resets the peer stream when one end destroys it', async () => {
    let agentStream: Duplex | undefined;
    const { tunnel } = await pair.connect((_header, stream) => {
      agentStream = stream;
    });
    const stream = await tunnel.open({ kind: 'ssh' });
    const errored = once(agentStream!, 'error');
    stream.destroy();
    const [error] = (await errored) as [Error];
    expect(error.message).to.equal('closed');
    expect(agentStream!.destroyed).to.equal(true);
    expect(tunnel.closed).to.equal(false);
  });

  it('closing the tunnel closes every stream at both ends', async () => {
    const agentStreams: Duplex[] = [];
    const { tunnel, agent } = await pair.connect((_header, stream) => {
      agentStreams.push(stream);
    });
    const streams = await Promise.all([1, 2, 3].map(() => tunnel.open({ kind: 'ssh' })));
    for (const s of [...streams, ...agentStreams]) s.on('error', () => {});
    const agentClosed = once(agent, 'close');
    tunnel.close();
    await agentClosed;
    await Promise.all([...streams, ...agentStreams].map((s) => (s.destroyed ? null : once(s, 'close'))));
    expect([...streams, ...agentStreams].every((s) => s.destroyed)).to.equal(true);
    await tunnel.open({ kind: 'ssh' }).then(
      () => expect.fail('open on a closed tunnel must fail'),
      (e: Error) => expect(e.message).to.equal('tunnel closed'),
    );
  });

  for (const [name, frame] of [
    ['an unknown frame type', Buffer.from([0x63, 0, 0, 0, 1, 0, 0, 0, 0])],
    [
      'an oversized frame',
      (() => {
        const f = Buffer.alloc(9);
        f.writeUInt8(FrameType.data, 0);
        f.writeUInt32BE(1, 1);
        f.writeUInt32BE(10 * 1024 * 1024, 5);
        return f;
      })(),
    ],
    ['data for a stream never opened', encodeFrame(FrameType.data, 99, Buffer.from('x'))],
    ['an open frame from the agent', encodeFrame(FrameType.open, 1, Buffer.from('{"kind":"ssh"}'))],
  ] as const) {
    it(`closes only that tunnel on ${name}`, async () => {
      const bad = await pair.connect(echo);
      const good = await pair.connect(echo);
      const goodStream = await good.tunnel.open({ kind: 'ssh' });
      let protocolErrors = 0;
      bad.tunnel.on('protocolError', () => protocolErrors++);
      const closed = once(bad.tunnel, 'close');
      bad.agentSocket.send(frame);
      await closed;
      expect(protocolErrors).to.equal(1);
      expect(bad.tunnel.closed).to.equal(true);
      // The other tunnel and its open stream carry on.
      expect(good.tunnel.closed).to.equal(false);
      const reply = readAll(goodStream);
      goodStream.end('still here');
      expect((await reply).toString()).to.equal('still here');
    });
  }

  it('closes the agent end on a malformed stream header', async () => {
    const { agent, serverSocket } = await pair.connect(echo);
    const closed = once(agent, 'close');
    serverSocket.send(encodeFrame(FrameType.open, 1, Buffer.from('{"kind":"telnet"}')));
    const [error] = (await closed) as [Error];
    expect(error.message).to.equal('malformed stream header');
  });
});
