import { parseArgs } from 'node:util';

export interface AgentConfig {
  /** Base URL of the Gatehouse server, e.g. https://gatehouse.example.com */
  serverAddress: URL;
  tenantId: string;
  /** An install key of the namespace, sent with every registration (required where the namespace requires one). */
  installKey?: string;
  privateKeyPath: string;
  preferredHostname?: string;
  preferredIdentity?: string;
  /** Seconds between availability calls (and tunnel pings). */
  keepaliveInterval: number;
  singleUserPassword?: string;
  /**
   * Whether the gateway reaches this device with the session protocol instead of SSH inside the tunnel. `auto`:
   * only where the tunnel itself is private (an https:// server address, or a server on this host), so session
   * bytes never cross a network in clear text.
   */
  sessionProtocol: 'auto' | 'on' | 'off';
}

/** A missing or wrong setting; the message names the variable so the owner can fix it. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

const SETTINGS = {
  serverAddress: { env: 'GATEHOUSE_SERVER_ADDRESS', flag: 'server-address' },
  tenantId: { env: 'GATEHOUSE_TENANT_ID', flag: 'tenant-id' },
  installKey: { env: 'GATEHOUSE_INSTALL_KEY', flag: 'install-key' },
  privateKeyPath: { env: 'GATEHOUSE_PRIVATE_KEY', flag: 'private-key' },
  preferredHostname: { env: 'GATEHOUSE_PREFERRED_HOSTNAME', flag: 'preferred-hostname' },
  preferredIdentity: { env: 'GATEHOUSE_PREFERRED_IDENTITY', flag: 'preferred-identity' },
  keepaliveInterval: { env: 'GATEHOUSE_KEEPALIVE_INTERVAL', flag: 'keepalive-interval' },
  singleUserPassword: { env: 'GATEHOUSE_SINGLE_USER_PASSWORD', flag: 'single-user-password' },
  sessionProtocol: { env: 'GATEHOUSE_SESSION_PROTOCOL', flag: 'session-protocol' },
} as const;

type SettingName = keyof typeof SETTINGS;

export const USAGE = `Usage: gatehouse-agent [options]
       gatehouse-agent connector [options]   beside a container engine (gatehouse-agent connector --help)

Every option can also be given by its environment variable.

  --server-address URL          GATEHOUSE_SERVER_ADDRESS      server base URL (required)
  --tenant-id UUID              GATEHOUSE_TENANT_ID           namespace tenant id (required)
  --install-key KEY             GATEHOUSE_INSTALL_KEY         install key of the namespace (required
                                                              where the namespace requires one)
  --private-key PATH            GATEHOUSE_PRIVATE_KEY         device key, created on first start (required)
  --preferred-hostname NAME     GATEHOUSE_PREFERRED_HOSTNAME  device name instead of the hostname
  --preferred-identity ID       GATEHOUSE_PREFERRED_IDENTITY  identity instead of the primary MAC
  --keepalive-interval SECONDS  GATEHOUSE_KEEPALIVE_INTERVAL  availability interval (default 30)
  --single-user-password PW     GATEHOUSE_SINGLE_USER_PASSWORD  sessions run as the agent's user
                                                              and sign in with this password
                                                              (or its crypt(3) hash)
  --session-protocol MODE       GATEHOUSE_SESSION_PROTOCOL    auto (default), on or off: sessions over the
                                                              tunnel without a second SSH layer; auto only
                                                              over https:// or to a server on this host
  --help, --version

The single executable (gatehouse-agent-linux-<arch>) also reads GATEHOUSE_AGENT_RUNTIME_DIR: where it
unpacks its runtime (default /var/lib/gatehouse-agent/runtime as root, else ~/.cache/gatehouse-agent).
`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HOSTNAME = /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const IDENTITY = /^[A-Za-z0-9][A-Za-z0-9:._-]{0,63}$/;
/** What the server takes as an install key: up to 128 printable characters without spaces. */
const INSTALL_KEY = /^[\x21-\x7e]{1,128}$/;

function describe(name: SettingName): string {
  const { env, flag } = SETTINGS[name];
  return `${env} (--${flag})`;
}

/**
 * Reads the configuration from flags, falling back to the environment. Throws
 * ConfigError naming the variable for the first missing or wrong value.
 */
export function loadConfig(argv: string[], env: NodeJS.ProcessEnv, isRoot: boolean): AgentConfig {
  const options = Object.fromEntries(
    Object.values(SETTINGS).map(({ flag }) => [flag, { type: 'string' as const }]),
  ) as Record<string, { type: 'string' }>;
  let flags: Record<string, string | boolean | undefined>;
  try {
    flags = parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new ConfigError(`${(error as Error).message}\n\n${USAGE}`);
  }
  const read = (name: SettingName): string | undefined => {
    const value = flags[SETTINGS[name].flag] ?? env[SETTINGS[name].env];
    return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
  };
  const required = (name: SettingName): string => {
    const value = read(name);
    if (value === undefined) throw new ConfigError(`${describe(name)} is required`);
    return value;
  };

  const address = required('serverAddress');
  let serverAddress: URL;
  try {
    serverAddress = new URL(address);
  } catch {
    throw new ConfigError(
      `${describe('serverAddress')} must be an http:// or https:// URL, got "${address}"`,
    );
  }
  if (serverAddress.protocol !== 'http:' && serverAddress.protocol !== 'https:') {
    throw new ConfigError(
      `${describe('serverAddress')} must be an http:// or https:// URL, got "${address}"`,
    );
  }

  const tenantId = required('tenantId');
  if (!UUID.test(tenantId))
    throw new ConfigError(`${describe('tenantId')} must be a UUID, got "${tenantId}"`);

  const installKey = read('installKey');
  // The key is a secret: the message names the rule, never the value.
  if (installKey !== undefined && !INSTALL_KEY.test(installKey)) {
    throw new ConfigError(`${describe('installKey')} must be up to 128 printable characters without spaces`);
  }

  const privateKeyPath = required('privateKeyPath');

  const preferredHostname = read('preferredHostname');
  if (preferredHostname !== undefined && !HOSTNAME.test(preferredHostname)) {
    throw new ConfigError(
      `${describe('preferredHostname')} must be 1 to 63 letters, digits or hyphens, got "${preferredHostname}"`,
    );
  }

  const preferredIdentity = read('preferredIdentity');
  if (preferredIdentity !== undefined && !IDENTITY.test(preferredIdentity)) {
    throw new ConfigError(
      `${describe('preferredIdentity')} must be 1 to 64 letters, digits or : . _ -, got "${preferredIdentity}"`,
    );
  }

  const interval = read('keepaliveInterval') ?? '30';
  const keepaliveInterval = Number(interval);
  if (!/^\d+$/.test(interval) || keepaliveInterval < 1 || keepaliveInterval > 3600) {
    throw new ConfigError(
      `${describe('keepaliveInterval')} must be whole seconds from 1 to 3600, got "${interval}"`,
    );
  }

  // A single-user password is taken as given: spaces may be part of it.
  const rawPassword = flags[SETTINGS.singleUserPassword.flag] ?? env[SETTINGS.singleUserPassword.env];
  const singleUserPassword = typeof rawPassword === 'string' && rawPassword !== '' ? rawPassword : undefined;
  if (!isRoot && singleUserPassword === undefined) {
    throw new ConfigError(
      `${describe('singleUserPassword')} is required when the agent does not run as root: ` +
        'without root it can neither read /etc/shadow nor start sessions as other users',
    );
  }

  const sessionProtocol = (read('sessionProtocol') ?? 'auto').toLowerCase();
  if (sessionProtocol !== 'auto' && sessionProtocol !== 'on' && sessionProtocol !== 'off') {
    throw new ConfigError(`${describe('sessionProtocol')} must be auto, on or off, got "${sessionProtocol}"`);
  }

  return {
    serverAddress,
    tenantId: tenantId.toLowerCase(),
    installKey,
    privateKeyPath,
    preferredHostname,
    preferredIdentity,
    keepaliveInterval,
    singleUserPassword,
    sessionProtocol,
  };
}

/**
 * Whether this agent offers the session protocol. In `auto`, only over a private tunnel: TLS, or a server on this
 * very host (loopback); over plain HTTP across a network the gateway keeps SSH inside the tunnel.
 */
export function offersSessionProtocol(
  config: Pick<AgentConfig, 'serverAddress' | 'sessionProtocol'>,
): boolean {
  if (config.sessionProtocol !== 'auto') return config.sessionProtocol === 'on';
  return tunnelIsPrivate(config.serverAddress);
}

/** Whether nothing between the agent and the server can read the tunnel: TLS, or a server on this host. */
export function tunnelIsPrivate(serverAddress: URL): boolean {
  if (serverAddress.protocol === 'https:') return true;
  const host = serverAddress.hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
