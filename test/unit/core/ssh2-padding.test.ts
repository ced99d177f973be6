import crypto from 'node:crypto';
import { createRequire } from 'node:module';
import { expect } from 'chai';

const require = createRequire(import.meta.url);
const CRYPTO_MODULE = require.resolve('ssh2/lib/protocol/crypto.js');

interface PacketCipher {
  allocPacket(payloadLength: number): Buffer;
}

interface CipherModule {
  NullCipher: new (seqno: number, onWrite: () => void) => PacketCipher;
  createCipher(config: unknown): PacketCipher;
  CIPHER_INFO: Record<string, { keyLen: number; ivLen: number }>;
  MAC_INFO: Record<string, { len: number }>;
}

/**
 * A sequence of 65,536 bytes in which no two adjacent bytes occur twice (a de Bruijn sequence of order 2 over all
 * byte values): any stretch of it is found again by its first two bytes alone.
 */
function deBruijn(): Buffer {
  const out: number[] = [];
  const a = [0, 0, 0];
  const visit = (t: number, p: number): void => {
    if (t > 2) {
      if (2 % p === 0) for (let j = 1; j <= p; j++) out.push(a[j] as number);
      return;
    }
    a[t] = a[t - p] as number;
    visit(t + 1, p);
    for (let j = (a[t - p] as number) + 1; j < 256; j++) {
      a[t] = j;
      visit(t + 1, t);
    }
  };
  visit(1, 1);
  return Buffer.from(out);
}

/**
 * A copy of ssh2's cipher module of its own, loaded while `crypto.randomFillSync` is replaced: the module takes the
 * function when it loads. Each fill writes the next 16 KiB of the de Bruijn sequence where random bytes would go, so
 * every byte a packet's padding gets can be traced to the fill and the place it came from.
 */
function tracedCiphers(): { ciphers: CipherModule; fills: Buffer[] } {
  const original = crypto.randomFillSync;
  const source = deBruijn();
  const fills: Buffer[] = [];
  let next = 0;
  const cached = require.cache[CRYPTO_MODULE];
  delete require.cache[CRYPTO_MODULE];
  crypto.randomFillSync = ((buffer: Buffer, offset = 0, size?: number) => {
    const length = size ?? buffer.length - offset;
    if (next + length > source.length) next = 0;
    source.copy(buffer, offset, next, next + length);
    fills.push(Buffer.from(buffer.subarray(offset, offset + length)));
    next += length;
    return buffer;
  }) as typeof original;
  try {
    return { ciphers: require(CRYPTO_MODULE) as CipherModule, fills };
  } finally {
    crypto.randomFillSync = original;
    if (cached) require.cache[CRYPTO_MODULE] = cached;
    else delete require.cache[CRYPTO_MODULE];
  }
}

/** Every kind of outbound cipher ssh2 has: the native bindings and Node's own crypto, AEAD and encrypt-then-MAC. */
function everyCipher(ciphers: CipherModule): [string, PacketCipher][] {
  const onWrite = () => {};
  const make = (name: string, forceNative: boolean, mac?: string) => {
    const info = ciphers.CIPHER_INFO[name] as { keyLen: number; ivLen: number };
    const macInfo = mac ? ciphers.MAC_INFO[mac] : undefined;
    return ciphers.createCipher({
      outbound: {
        onWrite,
        cipherInfo: info,
        cipherKey: Buffer.alloc(info.keyLen, 1),
        cipherIV: Buffer.alloc(info.ivLen, 2),
        seqno: 0,
        forceNative,
        ...(macInfo ? { macInfo, macKey: Buffer.alloc(macInfo.len, 3) } : {}),
      },
    });
  };
  const kinds: [string, PacketCipher][] = [['none', new ciphers.NullCipher(0, onWrite)]];
  for (const forceNative of [false, true]) {
    const how = forceNative ? "Node's crypto" : 'binding';
    kinds.push(
      [`aes128-gcm@openssh.com, ${how}`, make('aes128-gcm@openssh.com', forceNative)],
      [`chacha20-poly1305@openssh.com, ${how}`, make('chacha20-poly1305@openssh.com', forceNative)],
      [
        `aes128-ctr with hmac-sha2-256-etm@openssh.com, ${how}`,
        make('aes128-ctr', forceNative, 'hmac-sha2-256-etm@openssh.com'),
      ],
    );
  }
  return kinds;
}

describe('core: ssh2 as patched (patches/ssh2+1.17.0.patch)', () => {
  it('pads packets from a pool that one fill gives thousands of packets, and hands no byte of it out twice', () => {
    const { ciphers, fills } = tracedCiphers();
    const kinds = everyCipher(ciphers);
    // Per fill, the bytes of it handed out so far.
    const used = new Map<Buffer, Uint8Array>();
    let packets = 0;
    let paddingBytes = 0;
    for (let i = 0; i < 14_000; i++) {
      const [name, cipher] = kinds[i % kinds.length] as [string, PacketCipher];
      const payload = i % 64;
      const packet = cipher.allocPacket(payload);
      const padding = packet.subarray(5 + payload, 5 + payload + (packet[4] as number));
      expect(padding.length, name).to.be.within(4, 255);
      // Where the padding came from: the latest fill, found by its first two bytes, the rest matching.
      const fill = fills.at(-1) as Buffer;
      const at = fill.indexOf(padding.subarray(0, 2));
      expect(at, `${name}: padding not from the pool`).to.be.at.least(0);
      expect(
        fill.subarray(at, at + padding.length).equals(padding),
        `${name}: padding not from the pool`,
      ).to.equal(true);
      const marks = used.get(fill) ?? new Uint8Array(fill.length);
      used.set(fill, marks);
      for (let b = at; b < at + padding.length; b++) {
        expect(marks[b], `${name}: byte ${b} of fill ${fills.length} handed out twice`).to.equal(0);
        marks[b] = 1;
      }
      packets++;
      paddingBytes += padding.length;
    }
    // ssh2 as published fills once per packet, with just the padding's bytes.
    expect(fills.length).to.be.below(packets / 500);
    expect(fills.every((fill) => fill.length === 16 * 1024)).to.equal(true);
    expect(paddingBytes).to.be.greaterThan(16 * 1024 * 5);
  });

  it('is the one copy of ssh2 that the server and the agent load', () => {
    // patch-package patches the copy at the top of node_modules: a workspace with a copy of its own would run ssh2
    // as published.
    for (const workspace of ['core', 'agent', 'plugins/community']) {
      const from = new URL(`../../../${workspace}/`, import.meta.url).pathname;
      expect(require.resolve('ssh2/lib/protocol/crypto.js', { paths: [from] }), workspace).to.equal(
        CRYPTO_MODULE,
      );
    }
  });

  it('fills the pool from the operating system when the module runs as installed', () => {
    const { NullCipher } = require(CRYPTO_MODULE) as CipherModule;
    const cipher = new NullCipher(0, () => {});
    const seen = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      const packet = cipher.allocPacket(3);
      seen.add(packet.subarray(8, 8 + (packet[4] as number)).toString('hex'));
    }
    // Random eight-byte paddings are all different.
    expect(seen.size).to.equal(5000);
  });
});
