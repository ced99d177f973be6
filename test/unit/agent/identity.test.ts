import { createPrivateKey, createPublicKey, generateKeyPairSync, sign } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { md5Fingerprint, verifyGatewaySignature } from '@gatehouse/protocol/gateway-key';
import { expect } from 'chai';
import ssh2 from 'ssh2';
import { backoffDelayMs } from '../../../agent/device-agent';
import {
  architecture,
  defaultRouteInterface,
  loadOrCreateDeviceKey,
  parseOsRelease,
  primaryMac,
} from '../../../agent/identity';
import { AGENT_VERSION } from '../../../agent/version';

const ROUTES = `Iface\tDestination\tGateway\tFlags
docker0\t000011AC\t00000000\t0001
eth1\t00000000\t0101A8C0\t0003
eth1\t0001A8C0\t00000000\t0001
`;

describe('agent identity', () => {
  it('reads ID and PRETTY_NAME from os-release, quoted or not', () => {
    expect(
      parseOsRelease('PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\nVERSION_ID="12"\n'),
    ).to.deep.equal({
      id: 'debian',
      prettyName: 'Debian GNU/Linux 12 (bookworm)',
    });
    expect(parseOsRelease('')).to.deep.equal({ id: 'linux', prettyName: 'Linux' });
  });

  it('names architectures as container registries do', () => {
    expect(architecture('x64')).to.equal('amd64');
    expect(architecture('arm64')).to.equal('arm64');
    expect(architecture('riscv64')).to.equal('riscv64');
  });

  it('takes the MAC of the default-route interface, else the first by name', () => {
    expect(defaultRouteInterface(ROUTES)).to.equal('eth1');
    const nic = (mac: string, internal = false) => ({
      address: '10.0.0.2',
      netmask: '255.0.0.0',
      family: 'IPv4' as const,
      mac,
      internal,
      cidr: null,
    });
    const interfaces = {
      lo: [nic('00:00:00:00:00:00', true)],
      docker0: [nic('02:42:ac:11:00:01')],
      eth1: [nic('52:54:00:12:34:56')],
    };
    expect(primaryMac(interfaces, ROUTES)).to.equal('52:54:00:12:34:56');
    expect(primaryMac(interfaces, '')).to.equal('02:42:ac:11:00:01');
    expect(primaryMac({ lo: [nic('00:00:00:00:00:00', true)] }, '')).to.equal(undefined);
  });

  it('creates the device key once with mode 0600 and keeps it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-key-'));
    try {
      const path = join(dir, 'nested', 'agent.key');
      const first = await loadOrCreateDeviceKey(path);
      expect(first.created).to.equal(true);
      expect(statSync(path).mode & 0o777).to.equal(0o600);
      const second = await loadOrCreateDeviceKey(path);
      expect(second.created).to.equal(false);
      expect(second.key.privateKey).to.equal(first.key.privateKey);
      expect(second.key.publicKey).to.equal(first.key.publicKey);
      // The parsed key is that same key, ready to sign proofs.
      expect(second.key.signingKey.equals(createPrivateKey(first.key.privateKey))).to.equal(true);
      expect(readFileSync(path, 'utf8')).to.equal(first.key.privateKey);
      // The same key works as the ssh2 host key.
      expect(ssh2.utils.parseKey(first.key.privateKey)).to.not.be.instanceOf(Error);
      expect(
        createPublicKey(createPrivateKey(first.key.privateKey)).export({ type: 'spki', format: 'pem' }),
      ).to.equal(first.key.publicKey);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps AGENT_VERSION equal to the product version and to the agent package version', () => {
    const read = (file: string) =>
      (JSON.parse(readFileSync(new URL(file, import.meta.url), 'utf8')) as { version: string }).version;
    expect(AGENT_VERSION).to.equal(read('../../../package.json'));
    expect(AGENT_VERSION).to.equal(read('../../../agent/package.json'));
  });

  it('spreads reconnects with full jitter under a 60 s ceiling', () => {
    expect(backoffDelayMs(0, () => 0.999)).to.be.at.most(1000);
    expect(backoffDelayMs(3, () => 0.5)).to.equal(4000);
    expect(backoffDelayMs(30, () => 1)).to.equal(60_000);
    expect(backoffDelayMs(30, () => 0)).to.equal(0);
  });
});

describe('gateway public-key sign-in check', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  // The SSH wire form of the public key: string "ssh-ed25519", string key (32 bytes).
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  const keyBlob = Buffer.concat([
    Buffer.from([0, 0, 0, 11]),
    Buffer.from('ssh-ed25519'),
    Buffer.from([0, 0, 0, 32]),
    raw,
  ]);
  const blob = Buffer.from('session id and userauth request');
  const offer = {
    key: { algo: 'ssh-ed25519', data: keyBlob },
    blob,
    signature: sign(null, blob, privateKey),
  };

  it('accepts when the server signs the same blob to the same signature', async () => {
    const requests: unknown[] = [];
    const ok = await verifyGatewaySignature(offer, async (request) => {
      requests.push(request);
      return { signature: sign(null, Buffer.from(request.data, 'base64'), privateKey).toString('base64') };
    });
    expect(ok).to.equal(true);
    expect(requests).to.deep.equal([{ fingerprint: md5Fingerprint(keyBlob), data: blob.toString('base64') }]);
    expect(md5Fingerprint(keyBlob)).to.match(/^([0-9a-f]{2}:){15}[0-9a-f]{2}$/);
  });

  it('refuses another signature, a failed call, a malformed answer and other key types', async () => {
    const other = generateKeyPairSync('ed25519').privateKey;
    expect(
      await verifyGatewaySignature(offer, async (r) => ({
        signature: sign(null, Buffer.from(r.data, 'base64'), other).toString('base64'),
      })),
    ).to.equal(false);
    expect(await verifyGatewaySignature(offer, () => Promise.reject(new Error('503')))).to.equal(false);
    expect(await verifyGatewaySignature(offer, async () => ({ signature: 'AAAA' }))).to.equal(false);
    expect(
      await verifyGatewaySignature(
        offer,
        async () => JSON.parse('{"signature":42}') as { signature: string },
      ),
    ).to.equal(false);
    expect(
      await verifyGatewaySignature({ ...offer, key: { algo: 'ssh-rsa', data: keyBlob } }, async () => ({
        signature: offer.signature.toString('base64'),
      })),
    ).to.equal(false);
  });
});
