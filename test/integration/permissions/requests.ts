import { randomBytes } from 'node:crypto';
import type { RegisteredRoute } from '@gatehouse/core/http/route';
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/** Well-formed values for path parameters by name, so a request reaches the route it was generated from. */
export function sampleParam(name: string): string {
  switch (name) {
    case 'tenant':
      return '00000000-0000-4000-8000-000000000000';
    case 'uid':
    case 'id':
      return randomBytes(12).toString('hex');
    case 'fingerprint':
      return Array.from(randomBytes(16), (b) => b.toString(16).padStart(2, '0')).join(':');
    case 'address':
      return randomBytes(16).toString('hex');
    case 'seat':
      return '0';
    case 'status':
      return 'unused';
    case 'tag':
      return 'perm-tag';
    case 'key':
      return 'no-such-key';
    default:
      return `x${randomBytes(4).toString('hex')}`;
  }
}

/** The route's path with each `:param` replaced by `values[param]` or a sample. */
export function fillPath(route: RegisteredRoute, values: Record<string, string> = {}): string {
  return route.path.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) =>
    encodeURIComponent(values[name] ?? sampleParam(name)),
  );
}

/** A body the route's schema accepts where TypeBox can make one; otherwise an empty object. */
export function sampleBody(route: RegisteredRoute): unknown {
  const schema = route.schema.body as TSchema | undefined;
  if (!schema) return undefined;
  let body: unknown;
  try {
    body = Value.Create(schema);
  } catch {
    body = {};
  }
  // Empty strings and lists rarely pass minLength/minItems: fill the common shared fields with valid values.
  const props = (schema.properties ?? {}) as Record<string, unknown>;
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const b = body as Record<string, unknown>;
    if ('tags' in props) b.tags = ['perm-tag'];
    if ('tag' in props) b.tag = 'perm-tag';
  }
  return body;
}
