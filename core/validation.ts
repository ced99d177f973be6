import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';

/** One ajv setup for config, route schemas and tests: all errors off (first error names the field), formats on. */
export function createAjv(opts: { coerceTypes?: boolean | 'array' } = {}): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    strict: false,
    coerceTypes: opts.coerceTypes ?? false,
    useDefaults: true,
    removeAdditional: false,
  });
  addFormats.default(ajv);
  return ajv;
}

type SchemaNode = Record<string | symbol, unknown>;

/**
 * A copy of a body schema in which every object that lists its properties and says nothing about others refuses
 * them (`additionalProperties: false`), at every depth. Applied to every route's body when a plugin registers it, so
 * validation and the OpenAPI documents both refuse unknown fields and no route can forget to (extra body
 * fields such as `tenant_id` must never reach a service). An object that really takes any keys says so with
 * `additionalProperties` or `patternProperties` (TypeBox `T.Record`). Members of `allOf` are left as they are:
 * closing each part of an intersection would refuse the other parts' fields.
 */
export function closeObjects<S>(schema: S): S {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!node || typeof node !== 'object') return node;
    const s = { ...(node as SchemaNode) };
    if (s.properties && typeof s.properties === 'object') {
      s.properties = Object.fromEntries(
        Object.entries(s.properties as Record<string, unknown>).map(([k, v]) => [k, walk(v)]),
      );
      if (s.additionalProperties === undefined && s.patternProperties === undefined)
        s.additionalProperties = false;
    }
    for (const key of ['items', 'anyOf', 'oneOf', 'not', 'additionalProperties'] as const)
      if (s[key] && typeof s[key] === 'object') s[key] = walk(s[key]);
    return s;
  };
  return walk(schema) as S;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** True for a string PostgreSQL cannot store as text (NUL) or that is not well-formed UTF-16 (lone surrogate). */
export function unstorable(text: string): boolean {
  return text.includes('\u0000') || LONE_SURROGATE.test(text);
}

/**
 * The fields of a request value holding a string no store can keep: a NUL anywhere (PostgreSQL refuses it in text)
 * or a lone surrogate, in a value or in a key, at any depth. Names are the path from the top, dot-joined
 * (`filter.hostname`), the top-level name alone where `top` is given.
 */
export function unstorableFields(value: unknown, top: string): string[] {
  const found = new Set<string>();
  const walk = (v: unknown, path: string[], depth: number) => {
    if (typeof v === 'string') {
      if (unstorable(v)) found.add(path.join('.') || top);
      return;
    }
    if (!v || typeof v !== 'object' || depth > 32) return;
    for (const [k, child] of Object.entries(v)) {
      if (unstorable(k)) found.add([...path, k].join('.'));
      walk(child, [...path, k], depth + 1);
    }
  };
  walk(value, [], 0);
  return [...found];
}
