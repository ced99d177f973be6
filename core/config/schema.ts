import { type Static, Type as T } from '@sinclair/typebox';

/**
 * Every configuration key of core's, with its environment variable and meaning. This table is the single source for
 * the loader, the validator and the self-hosted reference page of the docs (`gatehouse reference --json`); each
 * plugin's settings come from its manifest (`configSchema`, `configKey`, `configEnv`) the same way.
 */
export const configSchema = T.Object(
  {
    edition: T.String({
      // One of the editions the host knows (the loader checks it against them).
      description: 'Which edition to run: decides the plugins that are loaded.',
    }),
    plugins: T.Array(T.String(), {
      description: 'Plugins of the edition, in load order (set by the edition file).',
    }),
    publicUrl: T.String({
      // Defaults to http://localhost:<http.port> when unset.
      format: 'uri',
      description: 'How the server is reached from outside; used in setup, invite and tunnel links.',
    }),
    dataDir: T.String({
      minLength: 1,
      description: 'Directory for the embedded database and generated keys.',
    }),
    http: T.Object({
      host: T.String({ description: 'Address the HTTP listener binds to.' }),
      port: T.Integer({
        minimum: 0,
        maximum: 65535,
        description: 'HTTP port for the API, console and agents.',
      }),
      bodyLimit: T.Integer({
        minimum: 1024,
        description: 'Largest accepted request body in bytes (413 beyond).',
      }),
      trustProxy: T.Boolean({
        description: 'Trust X-Forwarded-For / X-Forwarded-Proto from a reverse proxy.',
      }),
      corsOrigins: T.String({
        description:
          'Comma-separated origins (such as https://docs.example.org) whose pages may call the API from the ' +
          "browser, as the docs site's Try it does; empty allows none.",
      }),
    }),
    internal: T.Object({
      host: T.String({
        description: 'Address of the internal listener (calls under /internal/, never served publicly).',
      }),
      port: T.Integer({
        minimum: 0,
        maximum: 65535,
        description: 'Port of the internal listener; 0 picks a free one (logged at start).',
      }),
      address: T.Optional(
        T.String({
          format: 'uri',
          description:
            'How the other instances of a scaled-out installation reach this internal listener ' +
            '(defaults to http://<internal.host>:<port>).',
        }),
      ),
    }),
    ssh: T.Object({
      host: T.String({ description: 'Address the SSH gateway binds to.' }),
      port: T.Integer({ minimum: 0, maximum: 65535, description: 'SSH gateway port.' }),
      preAuthTimeout: T.Integer({
        minimum: 1,
        description: 'Seconds a connection may take to sign in, counted from the TCP accept.',
      }),
      maxStartups: T.String({
        pattern: '^\\d+:\\d+:\\d+$',
        description:
          'Unauthenticated connections at once, as OpenSSH MaxStartups "start:rate:full": from start on, new ' +
          'ones are refused with rate percent probability, rising linearly to all at full.',
      }),
      perSourceMaxStartups: T.Integer({
        minimum: 1,
        description: 'Unauthenticated connections at once from one source address; more are refused.',
      }),
      penalties: T.Object(
        {
          authFail: T.Integer({
            minimum: 0,
            description: 'Seconds of penalty a source earns with each failed password or key signature.',
          }),
          preAuthTimeout: T.Integer({
            minimum: 0,
            description:
              'Seconds of penalty a source earns when a connection of it reaches the pre-auth timeout.',
          }),
          min: T.Integer({
            minimum: 1,
            description:
              'Penalty a source must exceed before it is refused; below it, each failure is answered more slowly.',
          }),
          max: T.Integer({ minimum: 1, description: 'Longest penalty of a source, in seconds.' }),
          exempt: T.Array(T.String(), {
            description: 'Source addresses or CIDR ranges never penalised (e.g. a monitoring host).',
          }),
          targetAuthFail: T.Integer({
            minimum: 0,
            description:
              'Seconds of penalty a target (a device account, by device and user) earns with each failed password ' +
              'or key signature aimed at it, from any source (0 = none).',
          }),
          targetMin: T.Integer({
            minimum: 1,
            description:
              'Penalty a target must exceed before its password sign-ins are paused, from every source, until it ' +
              'runs out (at most max); keys still sign in.',
          }),
        },
        {
          description:
            'Per-source penalties of the SSH gateway, as OpenSSH PerSourcePenalties: failures add time, and a ' +
            'source whose time exceeds min is refused until it runs out.',
        },
      ),
      terminalTicketsPerMinute: T.Integer({
        minimum: 1,
        description:
          'Web-terminal tickets (POST /api/terminal/tickets) one user may get within a minute of their last one; ' +
          'more answer 429.',
      }),
      refusedSessionsPerMinute: T.Integer({
        minimum: 0,
        description:
          'Refused sign-ins (device pending, offline, firewall) kept as session rows per source and namespace ' +
          'within a minute of its last one; more are still refused with their message but not stored.',
      }),
      idleTimeout: T.Integer({
        minimum: 0,
        description: 'Seconds of silence before a session is closed (0 = never).',
      }),
    }),
    database: T.Object({
      url: T.Optional(
        T.String({ description: 'PostgreSQL URL; unset means the embedded PGlite in the data dir.' }),
      ),
      poolMax: T.Integer({ minimum: 1, description: 'Most PostgreSQL connections per server.' }),
      connectTimeout: T.Integer({
        minimum: 1,
        description: 'Seconds to wait for a new PostgreSQL connection before the call answers 503.',
      }),
      queryTimeout: T.Integer({
        minimum: 1,
        description: 'Seconds to wait for PostgreSQL to answer a query before the call answers 503.',
      }),
    }),
    redis: T.Object({
      keyPrefix: T.String({
        description:
          'Prefix of every Redis key; instances of one deployment share it, deployments sharing a Redis differ.',
      }),
      url: T.Optional(
        T.String({ description: 'Redis URL; unset means in-process counters (one server only).' }),
      ),
    }),
    smtp: T.Object({
      url: T.Optional(
        T.String({ description: 'SMTP URL for outgoing mail, e.g. smtp://user:pass@host:587.' }),
      ),
      from: T.String({ description: 'Sender address of outgoing mail.' }),
    }),
    tunnels: T.Object({
      domain: T.Optional(
        T.String({ description: 'Domain under which HTTP tunnels answer: <address>.<domain>.' }),
      ),
    }),
    auth: T.Object({
      tokenTtl: T.Integer({ minimum: 60, description: 'Seconds a user token stays valid.' }),
      lockoutThreshold: T.Integer({
        minimum: 1,
        description: 'Failed logins before a source/user pair locks.',
      }),
      lockoutMaxMinutes: T.Integer({ minimum: 1, description: 'Longest lockout in minutes.' }),
      hashConcurrency: T.Integer({
        minimum: 0,
        description: 'Password hashes run at once (0 = one per CPU core).',
      }),
      hashQueue: T.Integer({
        minimum: -1,
        description:
          'Password checks that may wait for a hashing slot; more answer 429 with Retry-After (-1 = 8 per slot).',
      }),
      loginFailuresPerSource: T.Integer({
        minimum: 0,
        description:
          'Failed logins one address may make per window, whatever the user names; more answer 429 with Retry-After (0 = no limit).',
      }),
      loginWindowSeconds: T.Integer({
        minimum: 1,
        description: 'The window of loginFailuresPerSource, in seconds.',
      }),
    }),
    metrics: T.Object({
      token: T.Optional(
        T.String({
          minLength: 16,
          description:
            'Bearer token for GET /metrics on the public listener; unset, /metrics is served on the internal listener only.',
        }),
      ),
    }),
    secrets: T.Object({
      key: T.Optional(
        T.String({
          description:
            'The key that encrypts MFA secrets and private keys in the store: base64 of 32 bytes; several, comma-separated, during a rotation (the first encrypts, any decrypts). Unset: the key file.',
        }),
      ),
      keyFile: T.Optional(
        T.String({
          description:
            'File holding that key when secrets.key is unset (default <dataDir>/secret.key, created with mode 600 on first start).',
        }),
      ),
    }),
    limits: T.Object({
      maxDevices: T.Integer({
        minimum: -1,
        description: 'Default device limit of a new namespace (-1 unlimited; otherwise at least 3).',
      }),
      maxNamespaces: T.Integer({
        minimum: -1,
        description: 'Default namespaces a new user may own (0 none, -1 unlimited).',
      }),
      pendingDevices: T.Integer({
        minimum: 1,
        description:
          'Pending devices a namespace keeps at most; new registrations beyond answer 429 until some are ' +
          'accepted, rejected or removed.',
      }),
      registrationsPerMinute: T.Integer({
        minimum: 1,
        description:
          'New devices one source address may register within a minute of its last attempt (429 beyond); ' +
          'registrations with a valid install key are not counted.',
      }),
      pendingPerSource: T.Integer({
        minimum: 1,
        description:
          'Pending devices registered without an install key that one source (an IPv4 address, an IPv6 /64) ' +
          'may hold in a namespace (429 beyond).',
      }),
      pendingPerBlock: T.Integer({
        minimum: 1,
        description:
          'Pending devices registered without an install key that one block of sources (an IPv4 /24, an IPv6 ' +
          '/48) may hold in a namespace (429 beyond).',
      }),
    }),
    log: T.Object({
      level: T.Union(
        ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => T.Literal(l)),
        { description: 'Log level.' },
      ),
      pretty: T.Optional(
        T.Boolean({
          description:
            'Human-readable logs (true) or JSON lines (false); unset: human-readable when standard output is a terminal.',
        }),
      ),
    }),
    heapGrowingPercent: T.Integer({
      minimum: 0,
      maximum: 1000,
      description:
        "How far `gatehouse serve`'s JavaScript heap may grow past what a full garbage collection kept, in percent " +
        "(V8's --heap-growing-percent); 0 leaves it to V8, which after an idle spell can run a full collection " +
        'every few scavenges while a large transfer goes through the gateway.',
    }),
    cloudUrl: T.String({
      format: 'uri',
      description: 'The hosted cloud product (docs "Get Started", invites).',
    }),
    pluginConfig: T.Record(T.String(), T.Unknown(), {
      description: 'Per-plugin settings, keyed by plugin name.',
    }),
  },
  { additionalProperties: false },
);

export type Config = Static<typeof configSchema>;

/** Environment variables and the key each one sets. */
export const envKeys: Record<string, string> = {
  GATEHOUSE_EDITION: 'edition',
  GATEHOUSE_PUBLIC_URL: 'publicUrl',
  GATEHOUSE_DATA_DIR: 'dataDir',
  GATEHOUSE_HTTP_HOST: 'http.host',
  GATEHOUSE_HTTP_PORT: 'http.port',
  GATEHOUSE_HTTP_BODY_LIMIT: 'http.bodyLimit',
  GATEHOUSE_TRUST_PROXY: 'http.trustProxy',
  GATEHOUSE_CORS_ORIGINS: 'http.corsOrigins',
  GATEHOUSE_INTERNAL_HOST: 'internal.host',
  GATEHOUSE_INTERNAL_PORT: 'internal.port',
  GATEHOUSE_INTERNAL_ADDRESS: 'internal.address',
  GATEHOUSE_SSH_HOST: 'ssh.host',
  GATEHOUSE_SSH_PORT: 'ssh.port',
  GATEHOUSE_SSH_PREAUTH_TIMEOUT: 'ssh.preAuthTimeout',
  GATEHOUSE_SSH_IDLE_TIMEOUT: 'ssh.idleTimeout',
  GATEHOUSE_SSH_MAX_STARTUPS: 'ssh.maxStartups',
  GATEHOUSE_SSH_PER_SOURCE_MAX_STARTUPS: 'ssh.perSourceMaxStartups',
  GATEHOUSE_SSH_TARGET_PENALTY: 'ssh.penalties.targetAuthFail',
  GATEHOUSE_SSH_TARGET_PENALTY_MIN: 'ssh.penalties.targetMin',
  GATEHOUSE_TERMINAL_TICKETS_PER_MINUTE: 'ssh.terminalTicketsPerMinute',
  GATEHOUSE_DATABASE_URL: 'database.url',
  GATEHOUSE_DATABASE_POOL_MAX: 'database.poolMax',
  GATEHOUSE_DATABASE_CONNECT_TIMEOUT: 'database.connectTimeout',
  GATEHOUSE_DATABASE_QUERY_TIMEOUT: 'database.queryTimeout',
  GATEHOUSE_REDIS_URL: 'redis.url',
  GATEHOUSE_REDIS_PREFIX: 'redis.keyPrefix',
  GATEHOUSE_SMTP_URL: 'smtp.url',
  GATEHOUSE_SMTP_FROM: 'smtp.from',
  GATEHOUSE_TUNNELS_DOMAIN: 'tunnels.domain',
  GATEHOUSE_TOKEN_TTL: 'auth.tokenTtl',
  GATEHOUSE_LOCKOUT_THRESHOLD: 'auth.lockoutThreshold',
  GATEHOUSE_LOCKOUT_MAX_MINUTES: 'auth.lockoutMaxMinutes',
  GATEHOUSE_HASH_CONCURRENCY: 'auth.hashConcurrency',
  GATEHOUSE_HASH_QUEUE: 'auth.hashQueue',
  GATEHOUSE_LOGIN_FAILURES_PER_SOURCE: 'auth.loginFailuresPerSource',
  GATEHOUSE_LOGIN_WINDOW: 'auth.loginWindowSeconds',
  GATEHOUSE_METRICS_TOKEN: 'metrics.token',
  GATEHOUSE_SECRET_KEY: 'secrets.key',
  GATEHOUSE_SECRET_KEY_FILE: 'secrets.keyFile',
  GATEHOUSE_MAX_DEVICES: 'limits.maxDevices',
  GATEHOUSE_MAX_NAMESPACES: 'limits.maxNamespaces',
  GATEHOUSE_PENDING_DEVICES: 'limits.pendingDevices',
  GATEHOUSE_REGISTRATIONS_PER_MINUTE: 'limits.registrationsPerMinute',
  GATEHOUSE_PENDING_PER_SOURCE: 'limits.pendingPerSource',
  GATEHOUSE_PENDING_PER_BLOCK: 'limits.pendingPerBlock',
  GATEHOUSE_LOG_LEVEL: 'log.level',
  GATEHOUSE_LOG_PRETTY: 'log.pretty',
  GATEHOUSE_HEAP_GROWING_PERCENT: 'heapGrowingPercent',
  GATEHOUSE_CLOUD_URL: 'cloudUrl',
};
