import crypto from 'node:crypto';
import { createRequire } from 'node:module';
import { expect } from 'chai';

const require = createRequire(import.meta.url);
const CRYPTO_MODULE = require.resolve('ssh2/lib/protocol/crypto.js');

interface PacketCipher {
  allocPacket(payloadLength: number): Buffer;
}

/**
 * A copy of ssh2's cipher module of its own, loaded while `randomFillSync` counts its calls: the module takes the
 * function from `crypto` when it loads.
 */
function countedCiphers(): {
  NullCipher: new (seqno: number, onWrite: () => void) => PacketCipher;
  calls: () => number;
} {
  const original = crypto.randomFillSync;
  let calls = 0;
  const cached = require.cache[CRYPTO_MODULE];
  delete require.cache[CRYPTO_MODULE];
  crypto.randomFillSync = ((...args: Parameters<typeof original>) => {
    calls++;
    return original(...args);
  }) as typeof original;
  try {
    const { NullCipher } = require(CRYPTO_MODULE);
    return { NullCipher, calls: () => calls };
  } finally {
    crypto.randomFillSync = original;
    if (cached) require.cache[CRYPTO_MODULE] = cached;
    else delete require.cache[CRYPTO_MODULE];
  }
}

describe('core: ssh2 as patched (patches/ssh2+1.17.0.patch)', () => {
  it('pads packets from a pool of random bytes, filled once per thousands of packets, each byte used once', () => {
    const { NullCipher, calls } = countedCiphers();
    const cipher = new NullCipher(0, () => {});
    const seen = new Set<string>();
    let padded = 0;
    for (let i = 0; i < 10_000; i++) {
      const payload = i % 32;
      const packet = cipher.allocPacket(payload);
      const padding = packet.subarray(5 + payload, 5 + payload + (packet[4] as number));
      expect(padding.length).to.be.within(4, 255);
      // Eight random bytes or more: two alike would mean the pool handed the same bytes out twice.
      if (padding.length >= 8) {
        seen.add(padding.toString('hex'));
        padded++;
      }
    }
    expect(padded).to.be.greaterThan(1000);
    expect(seen.size).to.equal(padded);
    // About 75,000 bytes of padding in all: a few fills of the 16 KiB pool, where ssh2 as published calls
    // randomFillSync once per packet.
    expect(calls()).to.be.within(1, 10);
  });
});
