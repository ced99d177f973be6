import { createHash, randomBytes } from 'node:crypto';
import { parseStreamHeader } from '@gatehouse/protocol/mux';
import {
  controlMessage,
  dataMessages,
  MAX_DATA_MESSAGE,
  Message,
  MessageDecoder,
  messageHeader,
  SessionProtocolError,
} from '@gatehouse/protocol/session-wire';
import { expect } from 'chai';
import { offersSessionProtocol } from '../../../agent/config';
import { readAll, TunnelPair } from './mux-fixture';

const CONN = 'a'.repeat(32);
const sha = (buf: Buffer) => createHash('sha256').update(buf).digest('hex');

describe('session protocol wire format', () => {
  it('decodes messages split anywhere, and several in one read; data comes in pieces as it arrives', () => {
    const payload = randomBytes(1000);
    const wire = Buffer.concat([
      controlMessage(Message.open, { command: { kind: 'shell' } }),
      ...dataMessages(Message.stdin, payload),
      controlMessage(Message.eof),
    ]);
    for (let cut = 1; cut < wire.length; cut += 7) {
      for (const second of [cut + 1, cut + 300, wire.length]) {
        const decoder = new MessageDecoder();
        const got = [
          ...decoder.push(wire.subarray(0, cut)),
          ...decoder.push(wire.subarray(cut, second)),
          ...decoder.push(wire.subarray(second)),
        ];
        const types = got.map((m) => m.type).filter((t, i, all) => t !== all[i - 1]);
        expect(types).to.deep.equal([Message.open, Message.stdin, Message.eof]);
        const data = Buffer.concat(got.filter((m) => m.type === Message.stdin).map((m) => m.payload));
        expect(data.equals(payload)).to.equal(true);
        expect(got.every((m) => m.type === Message.stdin || m.payload.length < 100)).to.equal(true);
      }
    }
  });

  it('never joins data: a payload split over reads comes out as views of those reads', () => {
    const payload = randomBytes(5000);
    const wire = Buffer.concat(dataMessages(Message.stdout, payload));
    const reads = [wire.subarray(0, 3), wire.subarray(3, 2000), wire.subarray(2000)];
    const decoder = new MessageDecoder();
    const pieces = reads.flatMap((read) => decoder.push(read));
    expect(Buffer.concat(pieces.map((p) => p.payload)).equals(payload)).to.equal(true);
    expect(pieces.at(-1)?.payload.buffer).to.equal(wire.buffer);
  });

  it('hands a whole payload on as a view of the read, not a copy', () => {
    const wire = Buffer.concat(dataMessages(Message.stdout, Buffer.from('hello')));
    const [message] = new MessageDecoder().push(wire);
    expect(message?.payload.buffer).to.equal(wire.buffer);
  });

  it('splits data at the message limit', () => {
    const parts = dataMessages(Message.stdout, Buffer.alloc(MAX_DATA_MESSAGE * 2 + 1));
    expect(parts.filter((_, i) => i % 2 === 1).map((p) => p.length)).to.deep.equal([
      MAX_DATA_MESSAGE,
      MAX_DATA_MESSAGE,
      1,
    ]);
  });

  it('refuses an unknown type and an oversized length as soon as the header is in', () => {
    expect(() => new MessageDecoder().push(messageHeader(99 as never, 0))).to.throw(SessionProtocolError);
    // Five bytes of header claiming 4 GiB: refused before any payload arrives, so nothing is buffered for it.
    expect(() => new MessageDecoder().push(messageHeader(Message.stdout, 0xffffffff))).to.throw(/too large/);
    expect(() => new MessageDecoder().push(messageHeader(Message.open, 10 * 1024 * 1024))).to.throw(
      /too large/,
    );
  });
});

describe('session protocol stream headers', () => {
  it('reads the four kinds of the session protocol', () => {
    expect(parseStreamHeader(Buffer.from('{"kind":"connection"}'))).to.deep.equal({ kind: 'connection' });
    expect(parseStreamHeader(Buffer.from(JSON.stringify({ kind: 'session', conn: CONN })))).to.deep.equal({
      kind: 'session',
      conn: CONN,
    });
    const direct = { kind: 'direct', conn: CONN, host: 'db', port: 5432, srcIP: '10.0.0.1', srcPort: 0 };
    expect(parseStreamHeader(Buffer.from(JSON.stringify(direct)))).to.deep.equal(direct);
    const pickup = { kind: 'pickup', conn: CONN, ref: 7 };
    expect(parseStreamHeader(Buffer.from(JSON.stringify(pickup)))).to.deep.equal(pickup);
  });

  for (const [name, header] of [
    ['a connection id that is not 32 hex', { kind: 'session', conn: 'ABC' }],
    ['no connection id', { kind: 'pickup', ref: 1 }],
    ['a port out of range', { kind: 'direct', conn: CONN, host: 'h', port: 70000, srcIP: '', srcPort: 0 }],
    ['a fractional reference', { kind: 'pickup', conn: CONN, ref: 1.5 }],
    ['an unknown kind', { kind: 'exec', conn: CONN }],
  ] as const) {
    it(`refuses ${name}`, () => {
      expect(parseStreamHeader(Buffer.from(JSON.stringify(header)))).to.equal(undefined);
    });
  }
});

describe('which agents offer the session protocol', () => {
  const offered = (url: string, mode: 'auto' | 'on' | 'off' = 'auto') =>
    offersSessionProtocol({ serverAddress: new URL(url), sessionProtocol: mode });

  it('offers it over TLS and to a server on this host, by default', () => {
    expect(offered('https://gatehouse.example.com')).to.equal(true);
    expect(offered('http://127.0.0.1:8080')).to.equal(true);
    expect(offered('http://localhost:8080')).to.equal(true);
    expect(offered('http://[::1]:8080')).to.equal(true);
  });

  it('keeps SSH inside a plain-HTTP tunnel across a network, unless told', () => {
    expect(offered('http://10.0.0.5:8080')).to.equal(false);
    expect(offered('http://gatehouse.lan')).to.equal(false);
    expect(offered('http://10.0.0.5:8080', 'on')).to.equal(true);
    expect(offered('https://gatehouse.example.com', 'off')).to.equal(false);
  });
});

describe('tunnel streams written in pieces', function () {
  this.timeout(15_000);
  let pair: TunnelPair;
  beforeEach(async () => {
    pair = await TunnelPair.start();
  });
  afterEach(async () => {
    await pair.stop();
  });

  it('delivers corked headers and payloads across frame boundaries intact and in order', async () => {
    const received: Promise<Buffer>[] = [];
    const { tunnel } = await pair.connect((_header, stream) => {
      received.push(readAll(stream));
      stream.end();
    });
    const stream = await tunnel.open({ kind: 'connection' });
    const pieces = Array.from({ length: 300 }, (_, i) => randomBytes(1 + ((i * 7919) % 20_000)));
    for (let i = 0; i < pieces.length; i += 3) {
      stream.cork();
      for (const piece of pieces.slice(i, i + 3)) stream.write(piece);
      stream.uncork();
    }
    stream.end();
    stream.resume();
    const [got] = await Promise.all(received);
    expect(sha(got as Buffer)).to.equal(sha(Buffer.concat(pieces)));
  });
});
