import { createHash, createPrivateKey, type KeyObject, randomBytes, sign, verify } from 'node:crypto';
import { readPublicKey } from './public-key';

/**
 * The agent protocol: how an agent proves to the server that it holds its device key. Both ends import this file,
 * so the signed text is written once.
 *
 * Version 2 (this one): every `POST /api/devices/auth` and every `/agent/connection` upgrade carries
 *
 *   X-Gatehouse-Agent-Protocol: 2
 *   X-Gatehouse-Timestamp: <unix seconds, by the server's clock>
 *   X-Gatehouse-Nonce: <16 to 64 characters of base64url, fresh for each request>
 *   X-Gatehouse-Signature: <base64 signature by the device key of the proof text>
 *
 * The proof text names what the request is for and the fields that matter, so a signature made for one request
 * proves nothing for another. The server checks the signature against the device key (the key on record: a
 * device uid is derived from its key), the timestamp against its own clock, and refuses a nonce it has seen
 * within the window (replay). Version 1 (agents before 0.2.0) sent no proof and is refused with a message.
 */
export const AGENT_PROTOCOL = 2;
/** How far the timestamp may be from the server's clock, either way. Agents correct by the server's Date. */
export const PROOF_WINDOW_SECONDS = 300;

export const PROTOCOL_HEADER = 'x-gatehouse-agent-protocol';
export const TIMESTAMP_HEADER = 'x-gatehouse-timestamp';
export const NONCE_HEADER = 'x-gatehouse-nonce';
export const SIGNATURE_HEADER = 'x-gatehouse-signature';
/**
 * On the tunnel upgrade: the stream kinds the agent serves beyond `ssh` and `tcp`, comma-separated (agents from
 * 0.3.0 that offer the session protocol). Not signed: it only chooses a protocol, and a stripped header leaves the
 * gateway on SSH, which pins the device key itself.
 */
export const STREAM_KINDS_HEADER = 'x-gatehouse-agent-streams';

const NONCE = /^[A-Za-z0-9_-]{16,64}$/;
const SIGNATURE = /^[A-Za-z0-9+/]{16,1400}={0,2}$/;

/** What a proof is for: a registration (or availability call) or a tunnel. */
export type ProofSubject =
  | { purpose: 'register'; tenantId: string; mac: string; publicKey: string; hostname: string }
  | { purpose: 'tunnel'; uid: string };

/** The SHA-256 of the device public key as the server keeps it (trimmed PEM), hex. */
export function keyDigest(publicKey: string): string {
  return createHash('sha256').update(publicKey.trim()).digest('hex');
}

/** The exact bytes a proof signs: unambiguous (JSON), versioned and bound to its subject and moment. */
export function proofText(subject: ProofSubject, timestamp: number, nonce: string): Buffer {
  const fields =
    subject.purpose === 'register'
      ? [subject.tenantId, subject.mac, keyDigest(subject.publicKey), subject.hostname]
      : [subject.uid];
  return Buffer.from(
    `gatehouse-agent-proof:${JSON.stringify([AGENT_PROTOCOL, subject.purpose, ...fields, timestamp, nonce])}`,
  );
}

/** RSA and ECDSA keys sign a SHA-256 digest; Ed25519 and Ed448 sign the text itself. */
function digestFor(key: KeyObject): string | null {
  return key.asymmetricKeyType === 'ed25519' || key.asymmetricKeyType === 'ed448' ? null : 'sha256';
}

/**
 * The four proof headers for a request, signed with the device's private key (agent side). Give the key parsed
 * (`createPrivateKey`) when signing more than once: reading a PEM private key costs OpenSSL 3 about 0.5 ms, ten
 * times an Ed25519 signature.
 */
export function proofHeaders(
  subject: ProofSubject,
  privateKey: string | KeyObject,
  now: number = Math.floor(Date.now() / 1000),
): Record<string, string> {
  const nonce = randomBytes(18).toString('base64url');
  const key = typeof privateKey === 'string' ? createPrivateKey(privateKey) : privateKey;
  const signature = sign(digestFor(key), proofText(subject, now, nonce), key);
  return {
    [PROTOCOL_HEADER]: String(AGENT_PROTOCOL),
    [TIMESTAMP_HEADER]: String(now),
    [NONCE_HEADER]: nonce,
    [SIGNATURE_HEADER]: signature.toString('base64'),
  };
}

export type ProofCheck =
  | { ok: true; nonce: string }
  | { ok: false; reason: 'protocol'; protocol: string | undefined }
  | { ok: false; reason: 'malformed' | 'key' | 'clock' | 'signature'; message: string };

/**
 * Parsed device keys by the digest of their PEM text, the most recently used last. Parsing a PEM key with OpenSSL 3's
 * decoders took 0.2 ms, more than checking the signature itself, on every availability call and tunnel of every
 * agent (bench/RESULTS.md, "10,000 agents"); `readPublicKey` reads the usual keys faster, once each. Bounded: past
 * the limit the least recently used key goes, and keys are held by digest, so an entry's size does not depend on
 * what a caller sends.
 */
const parsedKeys = new Map<string, KeyObject>();
const PARSED_KEYS_MAX = 16_384;

function parsedPublicKey(text: string): KeyObject {
  // The server stores a key trimmed and the agent sends it with its final newline: one key, one entry.
  const pem = text.trim();
  const id = createHash('sha256').update(pem).digest('base64');
  const known = parsedKeys.get(id);
  if (known) {
    parsedKeys.delete(id);
    parsedKeys.set(id, known);
    return known;
  }
  const key = readPublicKey(pem);
  parsedKeys.set(id, key);
  if (parsedKeys.size > PARSED_KEYS_MAX) {
    const oldest = parsedKeys.keys().next().value;
    if (oldest !== undefined) parsedKeys.delete(oldest);
  }
  return key;
}

/**
 * Checks the proof headers of a request against the device's public key (server side). Replay (a nonce seen
 * before) is the caller's to check, with the nonce this answers; it needs the shared cache.
 */
export function checkProof(
  headers: Record<string, string | string[] | undefined>,
  subject: ProofSubject,
  publicKey: string,
  now: number = Math.floor(Date.now() / 1000),
): ProofCheck {
  const one = (name: string) => {
    const v = headers[name];
    return typeof v === 'string' ? v.trim() : undefined;
  };
  const protocol = one(PROTOCOL_HEADER);
  if (protocol !== String(AGENT_PROTOCOL)) return { ok: false, reason: 'protocol', protocol };
  const timestamp = one(TIMESTAMP_HEADER) ?? '';
  const nonce = one(NONCE_HEADER) ?? '';
  const signature = one(SIGNATURE_HEADER) ?? '';
  if (!/^\d{1,12}$/.test(timestamp) || !NONCE.test(nonce) || !SIGNATURE.test(signature)) {
    return { ok: false, reason: 'malformed', message: 'the proof headers are missing or malformed' };
  }
  const ts = Number(timestamp);
  if (Math.abs(ts - now) > PROOF_WINDOW_SECONDS) {
    return {
      ok: false,
      reason: 'clock',
      message: `the timestamp is ${ts - now} s from the server's clock (at most ${PROOF_WINDOW_SECONDS} s)`,
    };
  }
  let key: KeyObject;
  try {
    key = parsedPublicKey(publicKey);
  } catch {
    return { ok: false, reason: 'key', message: 'the device public key is not a PEM public key' };
  }
  let valid = false;
  try {
    valid = verify(digestFor(key), proofText(subject, ts, nonce), key, Buffer.from(signature, 'base64'));
  } catch {
    valid = false;
  }
  if (!valid) return { ok: false, reason: 'signature', message: 'the signature is not by the device key' };
  return { ok: true, nonce };
}

/** The refusal an agent of another protocol version gets, naming what to do. */
export function protocolRefusal(protocol: string | undefined, agentVersion?: string): string {
  const who = agentVersion ? `gatehouse-agent ${agentVersion.slice(0, 32)}` : 'this agent';
  const spoken = protocol ? `agent protocol ${protocol.slice(0, 8)}` : 'agent protocol 1 (no key proof)';
  return (
    `${who} speaks ${spoken}; this server needs agent protocol ${AGENT_PROTOCOL}, where the agent proves it ` +
    'holds its device key. Update the agent to gatehouse-agent 0.2.0 or later (GET /agent/install.sh).'
  );
}
