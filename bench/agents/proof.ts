/**
 * What agent protocol 2's proof of possession costs the availability call (POST /api/devices/auth, every 30 s per
 * agent): the device's signature, checked against its RSA-2048 key (what the agent makes), plus the nonce's
 * set-if-absent in the cache, as a share of the whole call measured in-process in the same run (interleaved
 * rounds). Also what signing costs the agent.
 *
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres TEST_REDIS_URL=redis://127.0.0.1:6379 \
 *     node --import tsx bench/agents/proof.ts
 */
import { createPrivateKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { checkProof, proofHeaders } from '@gatehouse/protocol/agent-proof';
import { startServer } from '../../test/support/server';

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const p99 = (xs: number[]) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * 0.99) - 1)] as number;

async function main() {
  const rounds = Number(process.env.ROUNDS ?? 500);
  const server = await startServer({ ssh: false });
  try {
    const owner = await server.setup();
    const pem = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    // Parsed once, as the agent keeps it (agent/identity.ts).
    const key = { privateKey: createPrivateKey(pem.privateKey), publicKey: pem.publicKey };
    const body = {
      info: {
        id: 'debian',
        pretty_name: 'Debian',
        version: '0.2.0',
        arch: 'amd64',
        platform: 'native' as const,
      },
      sessions: [],
      hostname: 'bench-proof',
      identity: { mac: '02:00:00:00:99:01' },
      public_key: key.publicKey,
      tenant_id: owner.tenant,
    };
    const subject = {
      purpose: 'register' as const,
      tenantId: body.tenant_id,
      mac: body.identity.mac,
      publicKey: body.public_key,
      hostname: body.hostname,
    };
    const { devices, cache } = server.kernel.container.cradle;
    // Registered once: the rounds are availability calls of a known device.
    await devices.authenticate(body, '127.0.0.1', proofHeaders(subject, key.privateKey));
    const sign: number[] = [];
    const verify: number[] = [];
    const nonce: number[] = [];
    const call: number[] = [];
    for (let i = 0; i < rounds; i++) {
      let t = performance.now();
      const headers = proofHeaders(subject, key.privateKey);
      sign.push(performance.now() - t);
      t = performance.now();
      if (!checkProof(headers, subject, key.publicKey).ok) throw new Error('proof refused');
      verify.push(performance.now() - t);
      t = performance.now();
      await cache.setIfAbsent(`bench-proof:${randomBytes(12).toString('hex')}`, '1', 60);
      nonce.push(performance.now() - t);
      const fresh = proofHeaders(subject, key.privateKey);
      t = performance.now();
      await devices.authenticate(body, '127.0.0.1', fresh);
      call.push(performance.now() - t);
    }
    const fmt = (n: number) => n.toFixed(3);
    console.log(`rounds ${rounds}, load average ${loadavg()[0]?.toFixed(1)}, node ${process.version}`);
    console.log('| step | p50 ms | p99 ms |');
    console.log('|---|---|---|');
    console.log(`| agent: sign the proof (RSA-2048) | ${fmt(p50(sign))} | ${fmt(p99(sign))} |`);
    console.log(`| server: check the signature | ${fmt(p50(verify))} | ${fmt(p99(verify))} |`);
    console.log(`| server: nonce set-if-absent (cache) | ${fmt(p50(nonce))} | ${fmt(p99(nonce))} |`);
    console.log(
      `| server: whole availability call, proof included | ${fmt(p50(call))} | ${fmt(p99(call))} |`,
    );
    console.log(
      `proof share of the call at p50: ${((100 * (p50(verify) + p50(nonce))) / p50(call)).toFixed(0)} %`,
    );
  } finally {
    await server.stop();
  }
}

await main();
