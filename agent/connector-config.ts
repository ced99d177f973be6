import { parseArgs } from 'node:util';
import { ConfigError } from './config';

/** Where the connector reaches its container engine: the engine's Unix socket, or its API on a TCP port. */
export type EngineTarget = { kind: 'unix'; path: string } | { kind: 'tcp'; host: string; port: number };

export interface ConnectorConfig {
  /** Base URL of the Gatehouse server. */
  serverAddress: URL;
  /** The connector's token, as the console showed it: `<connector uid>.<secret>`. */
  token: string;
  /** The engine this connector serves; the server never names another. */
  engine: EngineTarget;
  /** Seconds between pings of the tunnel. */
  keepaliveInterval: number;
}

const SETTINGS = {
  serverAddress: { env: 'GATEHOUSE_SERVER_ADDRESS', flag: 'server-address' },
  token: { env: 'GATEHOUSE_CONNECTOR_TOKEN', flag: 'token' },
  engine: { env: 'GATEHOUSE_CONNECTOR_ENGINE', flag: 'engine' },
  keepaliveInterval: { env: 'GATEHOUSE_KEEPALIVE_INTERVAL', flag: 'keepalive-interval' },
} as const;

type SettingName = keyof typeof SETTINGS;

export const DEFAULT_ENGINE = 'unix:///var/run/docker.sock';

export const CONNECTOR_USAGE = `Usage: gatehouse-agent connector [options]

Runs beside a container engine (Docker, or podman's Docker-compatible API) and dials out to the Gatehouse server,
so that the engine's running containers become devices of the connector's namespace. The server reaches the engine
only through this process, and only the engine named here.

Every option can also be given by its environment variable.

  --server-address URL          GATEHOUSE_SERVER_ADDRESS      server base URL (required)
  --token TOKEN                 GATEHOUSE_CONNECTOR_TOKEN     the connector's token, shown once by the console
                                                              (required)
  --engine ADDRESS              GATEHOUSE_CONNECTOR_ENGINE    the engine's API: unix:///path/to/socket or
                                                              tcp://host:port (default DOCKER_HOST, else
                                                              ${DEFAULT_ENGINE})
  --keepalive-interval SECONDS  GATEHOUSE_KEEPALIVE_INTERVAL  tunnel ping interval (default 30)
  --help
`;

/** A connector uid (UUID), a dot, then 32 random bytes in base64url. */
export const CONNECTOR_TOKEN =
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.[A-Za-z0-9_-]{43}$/;

function describe(name: SettingName): string {
  const { env, flag } = SETTINGS[name];
  return `${env} (--${flag})`;
}

/** `unix:///path` or `tcp://host:port` (Docker's own DOCKER_HOST forms). */
export function parseEngine(text: string): EngineTarget | undefined {
  const unix = /^unix:\/\/(\/[^\0]{1,107})$/.exec(text);
  if (unix?.[1]) return { kind: 'unix', path: unix[1] };
  const tcp = /^tcp:\/\/(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]{1,253}):(\d{1,5})\/?$/.exec(text);
  if (tcp?.[1] && tcp[2]) {
    const port = Number(tcp[2]);
    if (port < 1 || port > 65535) return undefined;
    return { kind: 'tcp', host: tcp[1].replace(/^\[|\]$/g, ''), port };
  }
  return undefined;
}

/** The engine as the connector reports it to the server, e.g. `unix:///var/run/docker.sock`. */
export function describeEngine(engine: EngineTarget): string {
  if (engine.kind === 'unix') return `unix://${engine.path}`;
  return `tcp://${engine.host.includes(':') ? `[${engine.host}]` : engine.host}:${engine.port}`;
}

/** Reads the connector's configuration from flags, falling back to the environment. */
export function loadConnectorConfig(argv: string[], env: NodeJS.ProcessEnv): ConnectorConfig {
  const options = Object.fromEntries(
    Object.values(SETTINGS).map(({ flag }) => [flag, { type: 'string' as const }]),
  ) as Record<string, { type: 'string' }>;
  let flags: Record<string, string | boolean | undefined>;
  try {
    flags = parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new ConfigError(`${(error as Error).message}\n\n${CONNECTOR_USAGE}`);
  }
  const read = (name: SettingName): string | undefined => {
    const value = flags[SETTINGS[name].flag] ?? env[SETTINGS[name].env];
    return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
  };

  const address = read('serverAddress');
  if (address === undefined) throw new ConfigError(`${describe('serverAddress')} is required`);
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

  const token = read('token');
  if (token === undefined) throw new ConfigError(`${describe('token')} is required`);
  // The token is a secret: a wrong one is named by its shape, never echoed.
  if (!CONNECTOR_TOKEN.test(token)) {
    throw new ConfigError(
      `${describe('token')} is not a connector token (the console shows it once, as <uid>.<secret>)`,
    );
  }

  const engineText = read('engine') ?? (env.DOCKER_HOST?.trim() || DEFAULT_ENGINE);
  const engine = parseEngine(engineText);
  if (!engine) {
    throw new ConfigError(
      `${describe('engine')} must be unix:///path/to/socket or tcp://host:port, got "${engineText}"`,
    );
  }

  const interval = read('keepaliveInterval') ?? '30';
  const keepaliveInterval = Number(interval);
  if (!/^\d+$/.test(interval) || keepaliveInterval < 1 || keepaliveInterval > 3600) {
    throw new ConfigError(
      `${describe('keepaliveInterval')} must be whole seconds from 1 to 3600, got "${interval}"`,
    );
  }
  return { serverAddress, token, engine, keepaliveInterval };
}
