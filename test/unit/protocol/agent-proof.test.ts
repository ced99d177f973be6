import { generateKeyPairSync } from 'node:crypto';
import { checkProof, type ProofSubject, proofHeaders } from '@gatehouse/protocol/agent-proof';
import { expect } from 'chai';

/**
 * The proof of possession as the server checks it. The server keeps parsed device keys between calls: a check must
 * still use exactly the key it was given, whichever keys it parsed before.
 */
describe('agent protocol: the proof of possession', () => {
  const pair = (type: 'ed25519' | 'rsa') =>
    type === 'rsa'
      ? generateKeyPairSync('rsa', {
          modulusLength: 2048,
          publicKeyEncoding: { type: 'spki', format: 'pem' },
          privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
        })
      : generateKeyPairSync('ed25519', {
          publicKeyEncoding: { type: 'spki', format: 'pem' },
          privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
        });
  const subject: ProofSubject = { purpose: 'tunnel', uid: 'a'.repeat(64) };

  it('accepts a proof by the key given, again and again, and refuses one by any other key', () => {
    const a = pair('ed25519');
    const b = pair('rsa');
    for (let i = 0; i < 3; i++) {
      expect(checkProof(proofHeaders(subject, a.privateKey), subject, a.publicKey)).to.include({ ok: true });
      expect(checkProof(proofHeaders(subject, b.privateKey), subject, b.publicKey)).to.include({ ok: true });
      // Both keys are parsed and kept by now: each proof still answers to its own key only.
      expect(checkProof(proofHeaders(subject, a.privateKey), subject, b.publicKey)).to.include({
        ok: false,
        reason: 'signature',
      });
      expect(checkProof(proofHeaders(subject, b.privateKey), subject, a.publicKey)).to.include({
        ok: false,
        reason: 'signature',
      });
    }
  });

  it('refuses a proof about another subject, and a key that is not one', () => {
    const a = pair('ed25519');
    const other: ProofSubject = { purpose: 'tunnel', uid: 'b'.repeat(64) };
    expect(checkProof(proofHeaders(subject, a.privateKey), other, a.publicKey)).to.include({
      ok: false,
      reason: 'signature',
    });
    const notAKey = '-----BEGIN PUBLIC KEY-----\nAAAAAAAA\n-----END PUBLIC KEY-----\n';
    for (let i = 0; i < 2; i++) {
      expect(checkProof(proofHeaders(subject, a.privateKey), subject, notAKey)).to.include({
        ok: false,
        reason: 'key',
      });
    }
  });
});
