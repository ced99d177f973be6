import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { quickJwk, readPublicKey } from '@gatehouse/protocol/public-key';
import { expect } from 'chai';

/**
 * The server's quick reading of device keys (agent/public-key.ts) must read the key OpenSSL reads from the same PEM,
 * or step aside: never a different key, never one OpenSSL refuses.
 */
describe('agent: reading a device public key', () => {
  const spki = (key: KeyObject) => key.export({ type: 'spki', format: 'pem' }).toString();
  const openssl = (pem: string) => {
    try {
      return createPublicKey(pem);
    } catch {
      return undefined;
    }
  };
  const pem = (der: Buffer) =>
    `-----BEGIN PUBLIC KEY-----\n${der
      .toString('base64')
      .match(/.{1,64}/g)!
      .join('\n')}\n-----END PUBLIC KEY-----`;
  /** Whatever the quick path makes of `text` is what OpenSSL makes of it; `readPublicKey` agrees with OpenSSL. */
  const agrees = (text: string) => {
    const reference = openssl(text);
    const jwk = quickJwk(text);
    if (jwk) {
      expect(reference, 'the quick path read a key OpenSSL refuses').to.not.equal(undefined);
      expect(jwk).to.deep.equal(reference!.export({ format: 'jwk' }));
    }
    if (reference)
      expect(readPublicKey(text).export({ format: 'jwk' })).to.deep.equal(
        reference.export({ format: 'jwk' }),
      );
    else expect(() => readPublicKey(text)).to.throw();
  };

  it('reads RSA keys of every usual size and exponent, and Ed25519 keys, as OpenSSL does, by the quick path', () => {
    const keys = [
      ...[1024, 2048, 3072].map((modulusLength) => generateKeyPairSync('rsa', { modulusLength }).publicKey),
      generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 3 }).publicKey,
      generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 0x10001 + 2 ** 20 }).publicKey,
      ...Array.from({ length: 20 }, () => generateKeyPairSync('ed25519').publicKey),
    ];
    for (const key of keys) {
      const text = spki(key);
      for (const variant of [text, text.trim(), text.trim().replace(/\n/g, '\r\n')]) {
        expect(quickJwk(variant), variant).to.deep.equal(key.export({ format: 'jwk' }));
        expect(readPublicKey(variant).equals(key)).to.equal(true);
      }
    }
  });

  it('leaves other key types and encodings to OpenSSL, which still reads them', () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey;
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
    const pkcs1 = rsa.export({ type: 'pkcs1', format: 'pem' }).toString();
    for (const [text, key] of [
      [spki(ec), ec],
      [spki(generateKeyPairSync('ed448').publicKey), undefined],
      [pkcs1, rsa],
    ] as const) {
      expect(quickJwk(text)).to.equal(undefined);
      const read = readPublicKey(text);
      if (key) expect(read.equals(key)).to.equal(true);
    }
    for (const junk of ['', 'not a key', '-----BEGIN PUBLIC KEY-----\n\n-----END PUBLIC KEY-----']) {
      expect(quickJwk(junk)).to.equal(undefined);
      expect(() => readPublicKey(junk)).to.throw();
    }
  });

  it('agrees with OpenSSL on PEM text laid out otherwise: blank lines, padding alone, long lines, mixed ends', () => {
    for (const key of [
      generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey,
      generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey,
      generateKeyPairSync('ed25519').publicKey,
    ]) {
      const base64 = key.export({ type: 'spki', format: 'der' }).toString('base64');
      const lines = (width: number) => base64.match(new RegExp(`.{1,${width}}`, 'g'))!;
      const wrap = (body: string[], end = '\n') =>
        `-----BEGIN PUBLIC KEY-----${end}${body.join(end)}${end}-----END PUBLIC KEY-----`;
      const padded = base64.endsWith('=');
      for (const text of [
        wrap(lines(64)),
        wrap([...lines(64), '']),
        wrap(['', ...lines(64)]),
        wrap(lines(76)),
        wrap(lines(77)),
        wrap([base64]),
        wrap(lines(64), '\r\n'),
        wrap(lines(64)).replace('\n', '\r\n'),
        wrap(lines(64)).replace(/\n(?=[^\n]*$)/, '\n\n'),
        padded
          ? wrap([...lines(64).slice(0, -1), lines(64).at(-1)!.replace(/=+$/, ''), '=='])
          : wrap(lines(63)),
        wrap(lines(64).map((line) => ` ${line}`)),
        wrap(lines(64)).replace('-----END', '\n-----END'),
      ]) {
        agrees(text);
      }
    }
  });

  it('agrees with OpenSSL on every damaged RSA and Ed25519 key: each byte changed, cut short or lengthened', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({
      type: 'spki',
      format: 'der',
    });
    const ed = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'der' });
    let cases = 0;
    for (const der of [rsa, ed]) {
      // Every byte of the structure (the heads, lengths and tags come first; the key bytes are past 40).
      for (let at = 0; at < Math.min(der.length, 48); at++) {
        for (const value of [0x00, 0x01, 0x7f, 0x80, 0x81, 0x82, 0xff, der[at]! ^ 0x01]) {
          const damaged = Buffer.from(der);
          damaged[at] = value;
          agrees(pem(damaged));
          cases++;
        }
      }
      for (let cut = 1; cut < der.length; cut += 7) {
        agrees(pem(der.subarray(0, der.length - cut)));
        cases++;
      }
      agrees(pem(Buffer.concat([der, Buffer.from([0])])));
      agrees(pem(Buffer.concat([der, Buffer.from([5, 0])])));
      cases += 2;
    }
    expect(cases).to.be.greaterThan(700);
  });

  it('agrees with OpenSSL on RSA keys rebuilt with extra bytes, padded integers and long-form lengths', () => {
    const tlv = (tag: number, ...parts: Buffer[]) => {
      const content = Buffer.concat(parts);
      const n = content.length;
      const length = n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : [0x82, n >> 8, n & 255];
      return Buffer.concat([Buffer.from([tag, ...length]), content]);
    };
    const { n, e } = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'jwk' });
    const integer = (value: Buffer) =>
      tlv(0x02, value[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), value]) : value);
    const [modulus, exponent] = [
      integer(Buffer.from(n!, 'base64url')),
      integer(Buffer.from(e!, 'base64url')),
    ];
    const algorithm = Buffer.from('300d06092a864886f70d0101010500', 'hex');
    const spkiOf = (rsaKey: Buffer, { extraBits = Buffer.alloc(0), extraOuter = Buffer.alloc(0) } = {}) =>
      tlv(0x30, algorithm, tlv(0x03, Buffer.from([0]), rsaKey, extraBits), extraOuter);
    const exact = spkiOf(tlv(0x30, modulus, exponent));
    expect(quickJwk(pem(exact))).to.deep.equal({ kty: 'RSA', n, e });
    const one = Buffer.from([0]);
    for (const der of [
      spkiOf(tlv(0x30, modulus, exponent), { extraBits: one }),
      spkiOf(tlv(0x30, modulus, exponent), { extraOuter: one }),
      spkiOf(tlv(0x30, modulus, exponent, tlv(0x02, one))),
      spkiOf(tlv(0x30, modulus)),
      spkiOf(tlv(0x30, modulus, tlv(0x02, Buffer.concat([one, Buffer.from(e!, 'base64url')])))),
      spkiOf(tlv(0x30, modulus, tlv(0x02, Buffer.from([0x81, 0x00, 0x01])))),
      spkiOf(tlv(0x30, tlv(0x02, Buffer.from(n!, 'base64url')), exponent)),
      // The exponent's length in a long form it does not need.
      spkiOf(tlv(0x30, modulus, Buffer.from([0x02, 0x81, 0x03, 0x01, 0x00, 0x01]))),
    ]) {
      agrees(pem(der));
      expect(quickJwk(pem(der))).to.equal(undefined);
    }
  });
});
