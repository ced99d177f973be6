import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { Duplex } from 'node:stream';
import { type FrameTransport, MuxSession } from '@gatehouse/protocol/mux';
import { expect } from 'chai';
import {
  encodeFrame,
  encodeU32Frame,
  FrameDecoder,
  FrameType,
  HEADER_SIZE,
  MAX_DATA_PAYLOAD,
  ProtocolError,
} from '../../../protocol/mux/frame';
import { readAll } from './mux-fixture';

/**
 * Two sessions joined by an in-memory transport that re-cuts the byte stream at
 * arbitrary points, so every frame boundary case (header split, body split, several
 * frames in one chunk) is exercised.
 */
function splittingPair(cut: () => number) {
  const links: { peer?: MuxSession; queue: Buffer[] }[] = [{ queue: [] }, { queue: [] }];
  const transport = (index: 0 | 1): FrameTransport => ({
    send(frame, sent) {
      const link = links[1 - index]!;
      link.queue.push(frame);
      setImmediate(() => {
        const bytes = Buffer.concat(link.queue);
        link.queue = [];
        let offset = 0;
        while (offset < bytes.length) {
          const size = Math.max(1, Math.min(cut(), bytes.length - offset));
          link.peer!.receive(bytes.subarray(offset, offset + size));
          offset += size;
        }
        sent();
      });
    },
    bufferedAmount: () => 0,
    close: () => {},
  });
  const opener = new MuxSession(transport(0), { role: 'opener', timeoutMs: 3000 });
  const acceptor = new MuxSession(transport(1), {
    role: 'acceptor',
    timeoutMs: 3000,
    onStream: (_header, stream) => {
      stream.pipe(stream);
    },
  });
  links[1]!.peer = acceptor;
  links[0]!.peer = opener;
  return { opener, acceptor };
}

describe('agent/mux frames', () => {
  it('decodes frames fed one byte at a time', () => {
    const payload = randomBytes(1000);
    const wire = Buffer.concat([
      encodeFrame(FrameType.data, 7, payload),
      encodeU32Frame(FrameType.window, 7, 4096),
      encodeFrame(FrameType.fin, 7),
    ]);
    const decoder = new FrameDecoder();
    const frames = [];
    for (let i = 0; i < wire.length; i++) frames.push(...decoder.push(wire.subarray(i, i + 1)));
    expect(frames.map((f) => f.type)).to.deep.equal([FrameType.data, FrameType.window, FrameType.fin]);
    expect(Buffer.compare(frames[0]!.payload, payload)).to.equal(0);
    expect(frames[1]!.payload.readUInt32BE(0)).to.equal(4096);
    expect(decoder.buffered).to.equal(0);
  });

  it('rejects an oversized length as soon as the header is complete', () => {
    const header = Buffer.alloc(HEADER_SIZE);
    header.writeUInt8(FrameType.data, 0);
    header.writeUInt32BE(1, 1);
    header.writeUInt32BE(MAX_DATA_PAYLOAD + 1, 5);
    expect(() => new FrameDecoder().push(header)).to.throw(ProtocolError, /too large/);
  });

  it('rejects an unknown frame type', () => {
    expect(() => new FrameDecoder().push(Buffer.from([0x63, 0, 0, 0, 1, 0, 0, 0, 0]))).to.throw(
      ProtocolError,
      /unknown frame type 99/,
    );
  });

  it('carries bulk data intact over a transport that cuts frames at random points', async () => {
    const { opener } = splittingPair(() => 1 + Math.floor(Math.random() * 700));
    const stream: Duplex = await opener.open({ kind: 'ssh' });
    const sent = randomBytes(3 * 1024 * 1024 + 17);
    const received = readAll(stream);
    stream.end(sent);
    expect(Buffer.compare(await received, sent)).to.equal(0);
    opener.close();
  });

  it('survives a transport that delivers single bytes', async () => {
    const { opener } = splittingPair(() => 1);
    const stream = await opener.open({ kind: 'tcp', host: '127.0.0.1', port: 80 });
    const sent = randomBytes(20_000);
    const received = readAll(stream);
    stream.end(sent);
    expect(Buffer.compare(await received, sent)).to.equal(0);
    const closed = once(opener, 'close');
    opener.close();
    await closed;
  });
});
