import type { RouteDef } from './route';

/**
 * Field names that hold a credential wherever they appear in an answer: a token, an MFA secret and its recovery
 * codes, a web-terminal ticket, a gateway signature.
 */
export const SECRET_FIELDS: ReadonlySet<string> = new Set([
  'token',
  'secret',
  'recovery_codes',
  'ticket',
  'signature',
]);

/** Every property name of a JSON schema, at any depth (objects, arrays, unions, compositions). */
export function schemaFieldNames(schema: unknown, into = new Set<string>()): Set<string> {
  if (!schema || typeof schema !== 'object') return into;
  const s = schema as Record<string, unknown>;
  if (s.properties && typeof s.properties === 'object') {
    for (const [name, value] of Object.entries(s.properties as Record<string, unknown>)) {
      into.add(name);
      schemaFieldNames(value, into);
    }
  }
  for (const key of ['items', 'anyOf', 'allOf', 'oneOf', 'additionalProperties']) {
    const value = s[key];
    if (Array.isArray(value)) for (const v of value) schemaFieldNames(v, into);
    else schemaFieldNames(value, into);
  }
  return into;
}

/**
 * Whether a route answers a credential, so that no browser, proxy or shared cache may keep its answers: its answer
 * schema names a field of SECRET_FIELDS, or the route says so with `secret: true` (a credential under another
 * name, such as a new API key's `id`). The router sends `Cache-Control: no-store` on every answer of such a route,
 * refusals included, and the OpenAPI documents say so.
 */
export function answersSecret(route: Pick<RouteDef, 'secret' | 'schema'>): boolean {
  if (route.secret) return true;
  const names = new Set<string>();
  for (const schema of Object.values(route.schema.response ?? {})) schemaFieldNames(schema, names);
  return [...names].some((name) => SECRET_FIELDS.has(name));
}
