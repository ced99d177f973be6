// The small part of OpenAPI 3.1 the reference renders, and a $ref resolver.

export interface Schema {
  $ref?: string;
  type?: string | string[];
  format?: string;
  description?: string;
  enum?: unknown[];
  /** One fixed value (TypeBox literals: a union of them is an enumeration). */
  const?: unknown;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  nullable?: boolean;
  required?: string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
  additionalProperties?: boolean | Schema;
}

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  description?: string;
  schema?: Schema;
  $ref?: string;
}

export interface MediaType {
  schema?: Schema;
}

export interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  deprecated?: boolean;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; description?: string; content?: Record<string, MediaType> };
  responses?: Record<
    string,
    { description?: string; content?: Record<string, MediaType>; headers?: Record<string, unknown> }
  >;
  security?: Record<string, string[]>[];
}

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description?: string };
  servers?: { url: string; description?: string }[];
  paths: Record<string, Record<string, Operation | Parameter[] | string>>;
  components?: {
    schemas?: Record<string, Schema>;
    parameters?: Record<string, Parameter>;
    securitySchemes?: Record<string, { type: string; scheme?: string; name?: string; in?: string }>;
  };
}

export const httpMethods = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'] as const;

export interface OperationEntry {
  method: string;
  path: string;
  operation: Operation;
  parameters: Parameter[];
  id: string;
}

/** Looks up a local `#/components/...` reference; other references are left as they are. */
export function resolveRef<T extends { $ref?: string }>(document: OpenApiDocument, value: T): T {
  let current: T = value;
  const seen = new Set<string>();
  while (current.$ref?.startsWith('#/')) {
    if (seen.has(current.$ref)) break;
    seen.add(current.$ref);
    let target: unknown = document;
    for (const part of current.$ref.slice(2).split('/')) {
      target = (target as Record<string, unknown> | undefined)?.[
        part.replace(/~1/g, '/').replace(/~0/g, '~')
      ];
    }
    if (!target) break;
    current = target as T;
  }
  return current;
}

export function refName(schema: Schema): string | undefined {
  return schema.$ref?.split('/').pop();
}

/** Every operation of the document, in document order, with path-level parameters merged in. */
export function listOperations(document: OpenApiDocument): OperationEntry[] {
  if (!document.paths || typeof document.paths !== 'object' || Array.isArray(document.paths)) {
    // Thrown during render on purpose: the theme's error boundary shows it as a crashed page.
    throw new Error('The OpenAPI document has no "paths" object.');
  }
  const entries: OperationEntry[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    const shared = (Array.isArray(item.parameters) ? item.parameters : []) as Parameter[];
    for (const method of httpMethods) {
      const operation = item[method] as Operation | undefined;
      if (!operation || typeof operation !== 'object') continue;
      const own = (operation.parameters ?? []).map((p) => resolveRef(document, p));
      const merged = [
        ...shared
          .map((p) => resolveRef(document, p))
          .filter((p) => !own.some((o) => o.name === p.name && o.in === p.in)),
        ...own,
      ];
      entries.push({
        method,
        path,
        operation,
        parameters: merged,
        id: `${method}-${path}`.replace(/[^A-Za-z0-9]+/g, '-').replace(/-+$/, ''),
      });
    }
  }
  return entries;
}

export function describeType(schema: Schema): string {
  const name = refName(schema);
  if (name) return name;
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(' | ');
  const type = Array.isArray(schema.type) ? schema.type.join(' | ') : schema.type;
  if (type === 'array' && schema.items) return `${describeType(schema.items)}[]`;
  if (type) return schema.format ? `${type} (${schema.format})` : type;
  if (schema.oneOf) return schema.oneOf.map(describeType).join(' | ');
  if (schema.anyOf) return schema.anyOf.map(describeType).join(' | ');
  if (schema.allOf) return schema.allOf.map(describeType).join(' & ');
  return 'any';
}

export function describeLimits(schema: Schema): string[] {
  const limits: string[] = [];
  if (schema.minimum !== undefined) limits.push(`≥ ${schema.minimum}`);
  if (schema.maximum !== undefined) limits.push(`≤ ${schema.maximum}`);
  if (schema.minLength !== undefined) limits.push(`min length ${schema.minLength}`);
  if (schema.maxLength !== undefined) limits.push(`max length ${schema.maxLength}`);
  if (schema.minItems !== undefined) limits.push(`min items ${schema.minItems}`);
  if (schema.maxItems !== undefined) limits.push(`max items ${schema.maxItems}`);
  if (schema.pattern) limits.push(`pattern ${schema.pattern}`);
  if (schema.default !== undefined) limits.push(`default ${JSON.stringify(schema.default)}`);
  return limits;
}

/** A JSON example built from a schema, used to prefill the request body of "Try it". */
export function exampleOf(document: OpenApiDocument, input: Schema, depth = 0): unknown {
  const schema = resolveRef(document, input);
  if (depth > 6) return null;
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (schema.enum && schema.enum.length > 0) return schema.enum[0];
  const first = schema.oneOf?.[0] ?? schema.anyOf?.[0];
  if (first) return exampleOf(document, first, depth + 1);
  if (schema.allOf) {
    return Object.assign({}, ...schema.allOf.map((part) => exampleOf(document, part, depth + 1) as object));
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(schema.properties ?? {}))
        out[key] = exampleOf(document, value, depth + 1);
      return out;
    }
    case 'array':
      return schema.items ? [exampleOf(document, schema.items, depth + 1)] : [];
    case 'integer':
    case 'number':
      return schema.minimum ?? 0;
    case 'boolean':
      return false;
    case 'string':
      return schema.format === 'email' ? 'user@example.com' : 'string';
    default:
      return schema.properties ? exampleOf(document, { ...schema, type: 'object' }, depth) : null;
  }
}
