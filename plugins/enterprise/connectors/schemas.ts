import { Type as T } from '@sinclair/typebox';

/** A host name or an IP address (v4, or v6 without brackets): what a TCP connection to the engine takes. */
export const engineAddress = T.String({
  minLength: 1,
  maxLength: 255,
  pattern:
    '^([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|[0-9A-Fa-f:.]+)$',
  description: 'Host name or IP address of the Docker Engine API.',
});

export const enginePort = T.Integer({
  minimum: 0,
  maximum: 65535,
  description: 'TCP port of the Docker Engine API (SPEC.md section 5: 0 to 65535).',
});

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
    address: engineAddress,
    port: enginePort,
    secure: T.Optional(T.Boolean({ default: false, description: 'Connect with TLS.' })),
    tls: T.Optional(tlsInput),
  },
  { additionalProperties: false },
);

export const connectorUpdate = T.Object(
  {
    enable: T.Optional(T.Boolean()),
    address: T.Optional(engineAddress),
    port: T.Optional(enginePort),
    secure: T.Optional(T.Boolean()),
    tls: T.Optional(T.Union([tlsInput, T.Null()], { description: 'New TLS material; null removes it.' })),
  },
  { additionalProperties: false },
);

/** The Connector entity of SPEC.md section 3. */
export const connector = T.Object({
  uid: connectorUid,
  tenant_id: T.String({ format: 'uuid' }),
  enable: T.Boolean(),
  address: T.String(),
  port: T.Integer(),
  secure: T.Boolean(),
  status: T.Object({
    State: T.Union([T.Literal('connected'), T.Literal('disconnected')]),
    Message: T.String({ description: 'What the engine or the network said on the last attempt.' }),
  }),
  tls: T.Object(
    {
      ca: T.Optional(T.String()),
      cert: T.Optional(T.String({ description: 'The client certificate; its key is stored with it.' })),
    },
    { description: 'The TLS material stored. The private key is write-only: it is never answered.' },
  ),
  created_at: T.String({ format: 'date-time' }),
});

/** The engine's own information object (`GET /info` of the Docker Engine API), as the engine gives it. */
export const engineInfo = T.Object(
  {},
  { additionalProperties: true, description: "The container engine's information object, as it answers." },
);
