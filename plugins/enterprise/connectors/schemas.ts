import { type Static, Type as T } from '@sinclair/typebox';

const pem = (what: string) =>
  T.String({
    minLength: 1,
    maxLength: 16_384,
    pattern: '^\\s*-----BEGIN [A-Z0-9 ]+-----',
    description: `${what} (PEM).`,
  });

/**
 * TLS material for a `secure` connector: `ca` alone, `cert` with `key`, or all three; without `ca` the system's
 * CAs verify the engine.
 */
export const tlsInput = T.Object(
  {
    ca: T.Optional(pem('CA certificate the engine certificate must chain to')),
    cert: T.Optional(pem('Client certificate (with key)')),
    key: T.Optional(pem('Client private key (with cert); write-only, never answered back')),
  },
  { additionalProperties: false },
);

export const connectorUid = T.String({ format: 'uuid', description: 'Connector uid.' });

export const connectorCreate = T.Object(
  {
    enable: T.Optional(T.Boolean({ default: true, description: 'Whether its containers are devices.' })),
    secure: T.Optional(
      T.Boolean({
        default: false,
        description:
          'Speak TLS to the engine, end to end through the connector (a Docker host with --tlsverify).',
      }),
    ),
    tls: T.Optional(tlsInput),
  },
  {
    additionalProperties: false,
    description:
      'Where the engine is is not given here: the connector process beside the engine is started with it, and ' +
      'reports it as address and port once it connects.',
  },
);

export const connectorUpdate = T.Object(
  {
    enable: T.Optional(T.Boolean()),
    secure: T.Optional(T.Boolean()),
    tls: T.Optional(T.Union([tlsInput, T.Null()], { description: 'New TLS material; null removes it.' })),
  },
  { additionalProperties: false },
);

/** A connector token: the connector's uid, a dot, and a secret of 32 random bytes (base64url). */
export const connectorToken = T.String({
  pattern: '^[0-9a-f-]{36}\\.[A-Za-z0-9_-]{43}$',
  description:
    'The token the connector process dials in with (GATEHOUSE_CONNECTOR_TOKEN). Answered once, when it is made; ' +
    'the server keeps only its hash.',
});

/** How the connector reaches its engine, as the connector and the engine last said. */
const connectorStatus = T.Object({
  State: T.Union([T.Literal('connected'), T.Literal('disconnected')]),
  Message: T.String({
    description:
      'Connected: the engine’s name and version. Disconnected: which part of the path failed (the connector, its ' +
      'engine, TLS, or an answer that is not an engine’s), never a network error’s own text.',
  }),
});
export type EngineStatus = Static<typeof connectorStatus>;

const connectorFields = {
  uid: connectorUid,
  tenant_id: T.String({ format: 'uuid' }),
  enable: T.Boolean(),
  address: T.String({
    description:
      'Where the connector process reaches its engine, as it reported it: a Unix socket’s path, or a host; empty ' +
      'until it has connected.',
  }),
  port: T.Integer({
    description: 'The engine’s TCP port as the connector reported it; 0 for a Unix socket.',
  }),
  secure: T.Boolean(),
  status: connectorStatus,
  tls: T.Object(
    {
      ca: T.Optional(T.String()),
      cert: T.Optional(T.String({ description: 'The client certificate; its key is stored with it.' })),
    },
    { description: 'The TLS material stored. The private key is write-only: it is never answered.' },
  ),
  created_at: T.String({ format: 'date-time' }),
};

/** The Connector entity. */
export const connector = T.Object(connectorFields);
/** The Connector entity as the API answers it; the private key and the token are never in it. */
export type ConnectorView = Static<typeof connector>;

/** A connector as its creation answers it: with its token, which is never answered again. */
export const connectorWithToken = T.Object({ ...connectorFields, token: connectorToken });
export type ConnectorWithToken = Static<typeof connectorWithToken>;

/** The engine's own information object (`GET /info` of the Docker Engine API), as the engine gives it. */
export const engineInfo = T.Object(
  {},
  { additionalProperties: true, description: "The container engine's information object, as it answers." },
);
