import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { hostname, networkInterfaces } from 'node:os';
import { dirname } from 'node:path';
import { AGENT_VERSION } from './version';

/** `info` of the auth body (see docs/content/developers/agent/protocol.md). */
export interface DeviceInfo {
  id: string;
  pretty_name: string;
  version: string;
  arch: string;
  platform: 'docker' | 'native';
}

export function parseOsRelease(text: string): { id: string; prettyName: string } {
  const values = new Map<string, string>();
  for (const line of text.split('\n')) {
    const match = /^([A-Z_]+)=(.*)$/.exec(line.trim());
    if (!match) continue;
    values.set(match[1]!, match[2]!.replace(/^(["'])(.*)\1$/, '$2'));
  }
  return { id: values.get('ID') ?? 'linux', prettyName: values.get('PRETTY_NAME') ?? 'Linux' };
}

/** Architecture names as Go and container registries spell them (amd64, arm64, ...). */
export function architecture(nodeArch: string = process.arch): string {
  const names: Record<string, string> = { x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm' };
  return names[nodeArch] ?? nodeArch;
}

/** Docker, Podman and Kubernetes each leave one of these marks inside a container. */
export function insideContainer(read: (path: string) => string | undefined = readIfExists): boolean {
  if (existsSync('/.dockerenv') || existsSync('/run/.containerenv')) return true;
  const cgroup = read('/proc/1/cgroup') ?? '';
  return /docker|containerd|kubepods|libpod/.test(cgroup);
}

function readIfExists(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

export function deviceInfo(): DeviceInfo {
  const release = parseOsRelease(
    readIfExists('/etc/os-release') ?? readIfExists('/usr/lib/os-release') ?? '',
  );
  return {
    id: release.id,
    pretty_name: release.prettyName,
    version: AGENT_VERSION,
    arch: architecture(),
    platform: insideContainer() ? 'docker' : 'native',
  };
}

/** The interface of the default route in /proc/net/route (destination 00000000). */
export function defaultRouteInterface(routeTable: string): string | undefined {
  for (const line of routeTable.split('\n').slice(1)) {
    const [iface, destination] = line.trim().split(/\s+/);
    if (iface && destination === '00000000') return iface;
  }
  return undefined;
}

const NO_MAC = '00:00:00:00:00:00';

/**
 * MAC address of the primary interface: the one carrying the default route, else the
 * first non-loopback interface by name, so the identity is stable across restarts.
 */
export function primaryMac(
  interfaces: ReturnType<typeof networkInterfaces> = networkInterfaces(),
  routeTable = readIfExists('/proc/net/route') ?? '',
): string | undefined {
  const macOf = (name: string) =>
    interfaces[name]?.find((address) => !address.internal && address.mac !== NO_MAC)?.mac;
  const primary = defaultRouteInterface(routeTable);
  const fromRoute = primary ? macOf(primary) : undefined;
  if (fromRoute) return fromRoute;
  for (const name of Object.keys(interfaces).sort()) {
    const mac = macOf(name);
    if (mac) return mac;
  }
  return undefined;
}

export function deviceHostname(preferred: string | undefined): string {
  return preferred ?? hostname().split('.')[0] ?? 'device';
}

export interface DeviceKey {
  /** PEM private key (PKCS#1 RSA), also the SSH host key. */
  privateKey: string;
  /** PEM public key (SPKI), sent as `public_key`. */
  publicKey: string;
  /** The private key parsed once, for the proofs of agent protocol 2 (a PEM costs OpenSSL 3 0.5 ms a read). */
  signingKey: KeyObject;
}

/**
 * Loads the device key, or creates it on first start. The key is the device's identity
 * towards the server, so it is written once with mode 0600 and never replaced.
 */
export async function loadOrCreateDeviceKey(path: string): Promise<{ key: DeviceKey; created: boolean }> {
  let pem: string | undefined;
  try {
    pem = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  let created = false;
  if (pem === undefined) {
    const pair = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    pem = pair.privateKey;
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    await writeFile(path, pem, { mode: 0o600, flag: 'wx' });
    await chmod(path, 0o600);
    created = true;
  }
  const signingKey = createPrivateKey(pem);
  const publicKey = createPublicKey(signingKey).export({ type: 'spki', format: 'pem' }).toString();
  return { key: { privateKey: pem, publicKey, signingKey }, created };
}
