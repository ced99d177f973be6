import type { TSchema } from '@sinclair/typebox';
import { answersSecret } from './http/no-store';
import type { RegisteredRoute } from './http/route';

type Json = Record<string, unknown>;

const ERROR_BODY = {
  type: 'object',
  properties: { message: { type: 'string' }, code: { type: 'string' } },
  required: ['message'],
};
const FIELD_LIST = {
  type: 'array',
  items: { type: 'string' },
  description: 'Names of the offending fields.',
};

const errorAnswers: Record<string, Json> = {
  '400': { description: 'Bad request; invalid-field answers list the field names.', body: FIELD_LIST },
  '401': { description: 'missing or malformed jwt or API token', body: ERROR_BODY },
  '403': { description: 'Forbidden: the caller may not make this call.', body: ERROR_BODY },
  '404': { description: 'Not found.', body: ERROR_BODY },
};

/**
 * The OpenAPI 3.1 document of one edition, generated from the same route tables that drive validation and
 * permission checks, so it cannot drift from the code.
 */
export function openapiDocument(
  routes: RegisteredRoute[],
  meta: { edition: string; version: string; added?: string[] },
): Json {
  const paths: Record<string, Record<string, Json>> = {};
  const tags = new Set<string>();
  for (const r of [...routes].sort((a, b) => a.path.localeCompare(b.path))) {
    const p = r.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    paths[p] ??= {};
    for (const t of r.tags) tags.add(t);
    (paths[p] as Record<string, Json>)[r.method.toLowerCase()] = operation(r);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: `Gatehouse API (${meta.edition} edition${meta.added?.length ? ` with ${meta.added.join(', ')}` : ''})`,
      version: meta.version,
      description:
        'The HTTP API of Gatehouse, generated from the server route tables. Not yet stable. ' +
        'Authenticate with `Authorization: Bearer <token>` or `X-API-Key: <key>` (the key wins when both are sent).',
    },
    servers: [{ url: '/' }],
    tags: [...tags].sort().map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        jwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        'api-key': { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      },
      schemas: { Error: ERROR_BODY },
    },
  };
}

function operation(r: RegisteredRoute): Json {
  const op: Json = {
    operationId: operationId(r),
    summary: r.summary,
    tags: r.tags,
    'x-gatehouse-auth': r.auth,
    ...(r.role ? { 'x-gatehouse-role': r.role } : {}),
    ...(r.instanceAdmin ? { 'x-gatehouse-instance-admin': true } : {}),
  };
  if (r.description) op.description = r.description;
  if (r.deprecated) op.deprecated = true;
  const security: Json[] = [];
  if (r.auth.includes('user') || r.auth.includes('device')) security.push({ jwt: [] });
  if (r.auth.includes('apiKey')) security.push({ 'api-key': [] });
  if (r.auth.includes('none')) security.push({});
  op.security = security.length ? security : [{}];

  const parameters: Json[] = [];
  for (const [where, schema] of [
    ['path', r.schema.params],
    ['query', r.schema.query],
  ] as const) {
    const props = (schema?.properties ?? {}) as Record<string, TSchema>;
    const required = new Set<string>((schema?.required as string[] | undefined) ?? []);
    for (const [name, s] of Object.entries(props)) {
      parameters.push({
        name,
        in: where,
        // A parameter with a default may be left out: the server fills it in.
        required: where === 'path' || (required.has(name) && s.default === undefined),
        schema: clean(s),
        ...(s.description ? { description: s.description } : {}),
      });
    }
  }
  for (const [name, h] of Object.entries(r.schema.requestHeaders ?? {})) {
    parameters.push({
      name,
      in: 'header',
      required: h.required ?? false,
      schema: { type: 'string' },
      description: h.description,
    });
  }
  if (parameters.length) op.parameters = parameters;
  if (r.schema.body) {
    op.requestBody = { required: true, content: { 'application/json': { schema: clean(r.schema.body) } } };
  }
  const responses: Record<string, Json> = {};
  const declared = r.schema.response ?? { [r.status ?? 200]: null };
  // A paged list always answers with its total; the route may word the header's description itself.
  const headers = {
    ...(r.paged ? { 'X-Total-Count': 'Number of items in all pages.' } : {}),
    ...(answersSecret(r) ? { 'Cache-Control': '`no-store`: the answer carries a credential.' } : {}),
    ...r.schema.headers,
  };
  for (const [status, schema] of Object.entries(declared)) {
    responses[status] = {
      description: status.startsWith('2') ? 'Success' : 'Refused',
      ...(schema ? { content: { 'application/json': { schema: clean(schema) } } } : {}),
      ...(status.startsWith('2') && Object.keys(headers).length
        ? {
            headers: Object.fromEntries(
              Object.entries(headers).map(([h, d]) => [h, { description: d, schema: { type: 'string' } }]),
            ),
          }
        : {}),
    };
  }
  const standard = ['400', ...(r.auth.includes('none') && r.auth.length === 1 ? [] : ['401', '403'])];
  if (r.path.includes(':')) standard.push('404');
  for (const status of standard) {
    if (responses[status]) continue;
    const e = errorAnswers[status] as Json;
    responses[status] = { description: e.description, content: { 'application/json': { schema: e.body } } };
  }
  op.responses = responses;
  return op;
}

function operationId(r: RegisteredRoute): string {
  const words = r.path
    .replace(/^\/(api|internal)\//, '')
    .split(/[/_-]/)
    .filter(Boolean)
    .map((w) => (w.startsWith(':') ? `By${cap(w.slice(1))}` : cap(w)));
  return r.method.toLowerCase() + words.join('');
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** Strips TypeBox's symbol keys and JSON-Schema-only noise from a schema for the document. */
function clean(schema: TSchema): Json {
  return JSON.parse(JSON.stringify(schema)) as Json;
}
