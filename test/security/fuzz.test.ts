import { expect } from 'chai';
import { TestIdp } from '../support/saml-idp';
import type { ApiAnswer, ApiOptions, TestServer } from '../support/server';
import { apiAt, endsSignIn, histogram, type Request } from './lib';
import { buildWorld, example, fill, pathValues, type Schema, type Side, type World } from './world';

interface Parameter {
  name: string;
  in: 'path' | 'query';
  required?: boolean;
  schema: Schema;
}
interface Operation {
  edition: string;
  method: string;
  /** OpenAPI path, `/api/devices/{uid}`. */
  path: string;
  auth: string[];
  /** Instance administrators only: sent with the first-run administrator's token. */
  instanceAdmin: boolean;
  parameters: Parameter[];
  body: Schema | undefined;
  /** Statuses the document declares. */
  declared: string[];
  /** The operation as the document gives it: an edition's plugin that replaces a route changes it. */
  json: string;
}

const NUL = '\u0000';

/** Values no field expects: NULs, broken UTF-16, control and direction characters, injections, wrong types. */
const hostileValues: unknown[] = [
  '',
  `a${NUL}b`,
  NUL,
  '\ud800',
  'x\udfff',
  '\u202e\u0007\u001b[31m',
  '😀👍🏽\u200d',
  'ｱｲｳ\uFEFF\uFFFF',
  'é'.repeat(300),
  'x'.repeat(70_000),
  "' OR 1=1 --",
  '../../../etc/passwd',
  '__proto__',
  '%00',
  0,
  -1,
  1.5,
  2 ** 31,
  2 ** 53 + 2,
  true,
  null,
  [],
  {},
  { $ne: null },
];

/**
 * The hostile values for one field. Every wrong-typed value is refused by the same schema check, so a string field
 * gets every hostile string and a few of the other types, and any other field every other type and a few strings
 * (a list of strings also gets each hostile string as its item).
 */
function valuesFor(schema: Schema): unknown[] {
  const types = [schema.type, ...(schema.anyOf ?? []).map((s) => s.type)].flat();
  const strings = hostileValues.filter((v) => typeof v === 'string');
  const others = hostileValues.filter((v) => typeof v !== 'string');
  if (types.includes('string')) return [...strings, 0, null, {}];
  // A list of strings (tags, sessions) gets the hostile strings as its items too.
  const items = types.includes('array') && schema.items?.type === 'string' ? strings.map((v) => [v]) : [];
  return [...others, ...items, '', `a${NUL}b`, 'x'.repeat(70_000)];
}

/** Raw, already percent-encoded values for path segments and query strings. */
const hostileRaw = [
  '%00',
  'a%00b',
  '%ED%A0%80',
  '%E2%80%AE',
  '%F0%9F%98%80',
  'x'.repeat(4000),
  '..%2F..%2Fetc%2Fpasswd',
  '%27%20OR%201%3D1--',
  '__proto__',
  '-1',
  '0',
  '99999999999999999999999',
  '%5B%5D',
  '%7B%7D',
];

/** Whole bodies that are not what any route takes. */
const hostileBodies: { what: string; raw: string; headers?: Record<string, string>; heavy?: boolean }[] = [
  { what: 'malformed', raw: '{"a":' },
  { what: 'null', raw: 'null' },
  { what: 'string', raw: '"text"' },
  { what: 'number', raw: '42' },
  { what: 'array', raw: '[{"a":1}]' },
  { what: '__proto__', raw: '{"__proto__":{"isAdmin":true},"constructor":{"prototype":{"x":1}}}' },
  { what: 'duplicate keys', raw: '{"a":1,"a":2}' },
  { what: 'deep nesting', raw: `${'['.repeat(5000)}${']'.repeat(5000)}`, heavy: true },
  { what: 'NUL in a key', raw: '{"a\\u0000b":1}' },
  { what: 'lone surrogate in a key', raw: '{"\\ud800":1}' },
  { what: 'over the body limit', raw: `{"a":"${'x'.repeat(1_100_000)}"}`, heavy: true },
  { what: 'text/plain', raw: '{}', headers: { 'content-type': 'text/plain' } },
  { what: 'latin1 charset', raw: '{}', headers: { 'content-type': 'application/json; charset=latin1' } },
  { what: 'form', raw: 'a=1&b=2', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
];

/** Operations of an OpenAPI document. */
function operationsOf(doc: Record<string, unknown>, edition: string): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(
    doc.paths as Record<string, Record<string, Record<string, unknown>>>,
  )) {
    for (const [method, op] of Object.entries(item)) {
      const content = (op.requestBody as { content?: Record<string, { schema: Schema }> } | undefined)
        ?.content;
      ops.push({
        edition,
        method: method.toUpperCase(),
        path,
        auth: (op['x-gatehouse-auth'] as string[] | undefined) ?? ['none'],
        instanceAdmin: op['x-gatehouse-instance-admin'] === true,
        parameters: (op.parameters as Parameter[] | undefined) ?? [],
        body: content?.['application/json']?.schema,
        declared: Object.keys((op.responses as Record<string, unknown>) ?? {}),
        json: JSON.stringify(op),
      });
    }
  }
  return ops;
}

/**
 * Requests that change the most (deleting a namespace) go last, so the calls before them still find the objects
 * they are aimed at: reads, then writes, then deletes, deeper paths first, and signing out (which ends the owner's
 * token) after everything.
 */
function order(ops: Operation[]): Operation[] {
  const rank = (o: Operation) => (endsSignIn(o) ? 3 : o.method === 'GET' ? 0 : o.method === 'DELETE' ? 2 : 1);
  const depth = (o: Operation) => o.path.split('/').length;
  return [...ops].sort(
    (x, y) =>
      rank(x) - rank(y) ||
      (rank(x) === 2
        ? depth(y) - depth(x) || Number(x.path.includes('{tenant}')) - Number(y.path.includes('{tenant}'))
        : 0),
  );
}

interface Sent extends Request {
  op: Operation;
  what: string;
  /** Sent to the internal listener. */
  internal?: boolean;
  /** Which part of the request is hostile. */
  part: 'whole' | 'path' | 'query' | 'field' | 'method';
}

/**
 * The editions in the order their plugins stack up (cloud runs community, enterprise and cloud). Each is fuzzed on a
 * server of its own for the operations its plugins add or replace: SAML's calls are community's 501 stand-ins
 * replaced by enterprise, so they differ from community's and are fuzzed on the enterprise server.
 */
const editions: { name: string; overrides?: () => Record<string, unknown> }[] = [
  { name: 'community' },
  // SAML on (an IdP given by its metadata), so its calls run their own code instead of answering 501.
  { name: 'enterprise', overrides: () => ({ saml: { idpMetadataXml: new TestIdp().metadata() } }) },
  { name: 'cloud' },
];

/**
 * The fuzzer: from each edition's OpenAPI document, every operation gets requests in which one part at a time is
 * hostile (each path parameter, each query parameter, each body field at every depth, the whole body, the content
 * type), the rest kept well-formed, sent as the namespace owner (the instance administrator for instance
 * administration, and the device where a call takes a device token too) and without credentials. Nothing may
 * answer 5xx (beyond a status the document declares, SAML's 501), nothing may hang, every 400 is the JSON array of
 * field names and every other refusal the one `{ message }` body. A new route is in its edition's document, so it
 * is fuzzed without a line here, on a server of that edition (see `editions`). Counts go to stdout.
 */
describe('security: fuzzing every operation of the OpenAPI documents', function () {
  this.timeout(240_000);
  let world: World;
  let server: TestServer;
  const answers: { sent: Sent; res: ApiAnswer | { status: number; body: unknown; error: string } }[] = [];

  before(async () => {
    world = await buildWorld({ sides: ['a'] });
    server = world.server;
  });
  after(async () => {
    await server?.stop();
  });

  const credentials = (op: Operation, side: Side, admin: string): ApiOptions => {
    // Instance administration refuses everyone else before it reads the request.
    if (op.instanceAdmin) return { token: admin };
    if (op.auth.includes('user')) return { token: side.team.tokens.owner };
    if (op.auth.includes('apiKey')) return { apiKey: side.keys.owner };
    if (op.auth.includes('device')) return { token: side.device.token };
    return {};
  };

  const heavySent = new Set<string>();
  function requestsFor(op: Operation, side: Side): Sent[] {
    const koaPath = op.path.replace(/\{([^}]+)\}/g, ':$1');
    const values = pathValues({ path: koaPath }, side);
    const path = (override: Record<string, string> = {}) => {
      const filled = fill({ path: koaPath }, values);
      if (!Object.keys(override).length) return filled;
      // Overrides are raw (already percent-encoded) segments.
      return koaPath.replace(
        /:([A-Za-z0-9_]+)/g,
        (_, n: string) => override[n] ?? encodeURIComponent(values[n] ?? 'x'),
      );
    };
    const baseQuery: Record<string, string> = {};
    for (const p of op.parameters.filter(
      (x) => x.in === 'query' && x.required && x.schema.default === undefined,
    ))
      baseQuery[p.name] = String(example(p.schema, p.name, side));
    const query = (override: Record<string, string> = {}) => {
      const all = {
        ...Object.fromEntries(Object.entries(baseQuery).map(([k, v]) => [k, encodeURIComponent(v)])),
        ...override,
      };
      const q = Object.entries(all)
        .map(([k, v]) => `${k}=${v}`)
        .join('&');
      return q ? `?${q}` : '';
    };
    const body = op.body ? (example(op.body, 'body', side) as Record<string, unknown>) : undefined;
    const out: Sent[] = [];
    const add = (part: Sent['part'], what: string, p: string, opts: ApiOptions) =>
      out.push({ op, part, what, method: op.method, path: p, opts });
    const wellFormed = body ? { body } : {};

    add('whole', 'well-formed', path() + query(), wellFormed);
    for (const param of op.parameters) {
      for (const raw of hostileRaw) {
        const what = `${param.in} ${param.name}=${raw.slice(0, 20)}`;
        if (param.in === 'path') add('path', what, path({ [param.name]: raw }) + query(), wellFormed);
        else add('query', what, path() + query({ [param.name]: raw }), wellFormed);
      }
      if (param.in === 'query') {
        // Given twice, a parameter arrives as a list.
        const twice = `${param.name}=1&${param.name}=2`;
        add(
          'query',
          `query ${param.name} twice`,
          `${path()}${query() ? `${query()}&` : '?'}${twice}`,
          wellFormed,
        );
      }
    }
    const stray = '__proto__=1&constructor%5Bprototype%5D=x&a%5B%5D=1&a%5B%5D=2';
    add('query', 'stray query', `${path()}${query() ? `${query()}&` : '?'}${stray}`, wellFormed);
    if (body && op.body) {
      for (const [field, schema] of fieldsOf(op.body, body)) {
        for (const v of valuesFor(schema)) {
          const what = `body ${field.join('.')}=${JSON.stringify(v)?.slice(0, 20)}`;
          add('field', what, path() + query(), { body: setIn(body, field, v) });
        }
      }
      // The body is read before routing, the same way for every route: the costly ones (a megabyte, deep
      // nesting) go once per method, the rest to every operation.
      const first = !heavySent.has(op.method);
      heavySent.add(op.method);
      for (const b of hostileBodies.filter((x) => first || !x.heavy))
        add('whole', `body ${b.what}`, path() + query(), { raw: b.raw, headers: b.headers ?? {} });
    }
    return out;
  }

  /**
   * Every request of the run for `ops`, aimed at `side`'s objects; `documented` is the edition's whole document
   * (a method of one of the paths is not undocumented because another edition defined it).
   */
  function plan(ops: Operation[], documented_: Operation[], side: Side, admin: string): Sent[] {
    const all: Sent[] = [];
    // Methods a path does not document are refused with the one error body.
    const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
    for (const path of new Set(ops.map((o) => o.path))) {
      const documented = documented_.filter((o) => o.path === path);
      const koaPath = path.replace(/\{([^}]+)\}/g, ':$1');
      for (const method of methods.filter((m) => !documented.some((o) => o.method === m))) {
        const op: Operation = { ...(documented[0] as Operation), method, declared: [] };
        all.push({
          op,
          part: 'method',
          what: `owner: undocumented method`,
          method,
          path: fill({ path: koaPath }, pathValues({ path: koaPath }, side)),
          opts: {
            ...credentials(documented[0] as Operation, side, admin),
            ...(method === 'GET' ? {} : { body: {} }),
          },
        });
      }
    }
    for (const op of ops) {
      // Calls only other instances make are served on the internal listener: fuzzed there, as such a caller.
      if (op.auth.every((k) => k === 'internal')) {
        for (const r of requestsFor(op, side))
          all.push({ ...r, internal: true, what: `internal: ${r.what}` });
        continue;
      }
      const publicOnly = op.auth.every((k) => k === 'none');
      for (const r of requestsFor(op, side)) {
        // A public call ignores credentials: one anonymous request says it all. A call that needs them gets every
        // request as the owner, and without credentials those the server reads before it authenticates (the body).
        if (!publicOnly)
          all.push({ ...r, opts: { ...r.opts, ...credentials(op, side, admin) }, what: `owner: ${r.what}` });
        if (publicOnly || r.part === 'whole' || r.part === 'path')
          all.push({ ...r, what: `anonymous: ${r.what}` });
        // A call agents make as well as users: the device's own path through the handler gets every request too.
        if (op.auth.includes('device') && (op.auth.includes('user') || op.auth.includes('apiKey')))
          all.push({ ...r, opts: { ...r.opts, token: side.device.token }, what: `device: ${r.what}` });
      }
    }
    return all;
  }

  it('reads the documents of every edition', async () => {
    for (const edition of ['community', 'cloud']) {
      const res = await server.api('GET', `/openapi/${edition}.json`);
      expect(res.status).to.equal(200);
      expect(Object.keys(res.body.paths).length).to.be.greaterThan(50);
    }
    const enterprise = await server.kernel.openapiOf('enterprise');
    expect(Object.keys(enterprise.paths as object)).to.include('/api/connector');
  });

  /** Operations fuzzed, by edition. */
  const operations: Record<string, number> = {};
  const stillUp: string[] = [];
  it('answers no 5xx, never hangs, and gives one error shape, as the owner and without credentials', async function () {
    const started = Date.now();
    // Each operation as the last edition to define it was fuzzed (its document's JSON), by method and path.
    const fuzzed = new Map<string, string>();
    for (const edition of editions) {
      const own =
        edition.name === 'community'
          ? world
          : await buildWorld({ sides: ['a'], edition: edition.name, overrides: edition.overrides?.() });
      try {
        const documented = operationsOf(await own.server.kernel.openapiOf(edition.name), edition.name);
        const ops = documented.filter((o) => fuzzed.get(`${o.method} ${o.path}`) !== o.json);
        for (const o of ops) fuzzed.set(`${o.method} ${o.path}`, o.json);
        if (!ops.length) continue;
        const requests = plan(order(ops), documented, own.a, own.admin.token);
        // The time this edition's share may take (from now): about 13 ms a request on an idle machine, a few
        // times that on a busy one, so a new route does not time the run out.
        this.timeout(120_000 + requests.length * 50);
        operations[edition.name] = ops.length;
        await sendTimed(own.server, requests, answers, 8);
        const up = await own.server.api('GET', '/healthz');
        if (up.status !== 200) stillUp.push(`${edition.name}: /healthz ${up.status}`);
      } finally {
        if (own !== world) await own.server.stop();
      }
    }
    const seconds = (Date.now() - started) / 1000;
    // SAML's own code answered (it was on): its assertion consumer refuses a bad answer with a redirect to the
    // console (which the client follows to its page), where SAML off would have answered 501.
    const consumer = answers.find(
      (a) =>
        a.sent.op.edition === 'enterprise' &&
        a.sent.op.path === '/api/user/saml/acs' &&
        a.sent.what.endsWith('well-formed'),
    );
    expect(consumer?.res.status).to.equal(200);

    const wrong: string[] = [];
    const byOperation = new Map<string, number>();
    for (const { sent, res } of answers) {
      const where = `${sent.method} ${sent.op.path} (${sent.what}) -> ${res.status}`;
      if ('error' in res) wrong.push(`${where} ${res.error}`);
      // The path may match another template under that method (PATCH /api/devices/{uid}/tunnels is
      // PATCH /api/devices/{uid}/{status}), so any refusal will do; not a success.
      else if (sent.part === 'method' && res.status < 400)
        wrong.push(`${where} (an undocumented method succeeded)`);
      else if (res.status >= 500 && !sent.op.declared.includes(String(res.status)))
        wrong.push(`${where} ${JSON.stringify(res.body)}`);
      else if (res.status === 400 || res.status === 409) {
        const ok =
          Array.isArray(res.body) &&
          res.body.length > 0 &&
          res.body.every((f) => typeof f === 'string' && f.length > 0);
        if (!ok) wrong.push(`${where} body ${JSON.stringify(res.body)?.slice(0, 200)}`);
      } else if (res.status >= 400) {
        const b = res.body as { message?: unknown } | undefined;
        if (typeof b !== 'object' || b === null || Array.isArray(b) || typeof b.message !== 'string')
          wrong.push(`${where} body ${JSON.stringify(res.body)?.slice(0, 200)}`);
      }
    }
    if (process.env.FUZZ_DEBUG) {
      const ms = new Map<string, [number, number]>();
      for (const { sent } of answers) {
        const k = `${sent.method} ${sent.op.path}`;
        const [t, n] = ms.get(k) ?? [0, 0];
        ms.set(k, [t + ((sent as Sent & { ms?: number }).ms ?? 0), n + 1]);
      }
      for (const [k, [t, n]] of [...ms].sort((x, y) => y[1][0] - x[1][0]).slice(0, 25))
        console.log(`${k}: ${n} requests, ${t} ms in all, ${Math.round(t / n)} ms each`);
    }
    const statuses = histogram(answers.map((a) => a.res));
    const fivexx = answers.filter((a) => a.res.status >= 500).length;
    console.log(
      `      fuzz: ${answers.length} requests to ${JSON.stringify(operations)} operations in ${seconds.toFixed(1)} s; ` +
        `statuses ${JSON.stringify(statuses)}; 5xx=${fivexx} (declared 501s included)`,
    );
    for (const w of wrong) {
      const key = w.slice(0, w.indexOf(' ('));
      byOperation.set(key, (byOperation.get(key) ?? 0) + 1);
    }
    expect(
      { byOperation: Object.fromEntries(byOperation), examples: wrong.slice(0, 30) },
      `${wrong.length} wrong answers`,
    ).to.deep.equal({ byOperation: {}, examples: [] });
  });

  it('every server is still up and serving after it', async () => {
    expect(stillUp).to.deep.equal([]);
    expect((await server.api('GET', '/healthz')).status).to.equal(200);
    expect((await server.api('GET', '/info')).status).to.equal(200);
  });
});

/** Every field path of a body (top-level and inside nested objects of the example), for one-at-a-time attacks. */
function fieldsOf(
  schema: Schema,
  body: Record<string, unknown>,
  prefix: string[] = [],
): [string[], Schema][] {
  const out: [string[], Schema][] = [];
  const branch = schema.properties ? schema : schema.anyOf?.find((s) => s.properties);
  for (const [name, s] of Object.entries(branch?.properties ?? {})) {
    out.push([[...prefix, name], s]);
    const v = body[name];
    if (v && typeof v === 'object' && !Array.isArray(v) && prefix.length < 3)
      out.push(...fieldsOf(s, v as Record<string, unknown>, [...prefix, name]));
  }
  return out;
}

function setIn(body: Record<string, unknown>, path: string[], value: unknown): Record<string, unknown> {
  const [head, ...rest] = path as [string, ...string[]];
  if (!rest.length) return { ...body, [head]: value };
  const inner = body[head];
  return {
    ...body,
    [head]: setIn(inner && typeof inner === 'object' ? (inner as Record<string, unknown>) : {}, rest, value),
  };
}

/** Sends `width` requests at a time; one that takes over 30 s is recorded as a hang. */
async function sendTimed(
  server: TestServer,
  requests: Sent[],
  into: { sent: Sent; res: ApiAnswer | { status: number; body: unknown; error: string } }[],
  width: number,
): Promise<void> {
  let next = 0;
  const internal = apiAt(server.kernel.internalUrl);
  const worker = async () => {
    while (next < requests.length) {
      const sent = requests[next++] as Sent;
      const api = sent.internal ? internal : server.api;
      let timer: NodeJS.Timeout | undefined;
      const hang = new Promise<{ status: number; body: unknown; error: string }>((resolve) => {
        timer = setTimeout(() => resolve({ status: 0, body: undefined, error: 'no answer in 30 s' }), 30_000);
      });
      const t0 = Date.now();
      const res = await Promise.race([
        api(sent.method, sent.path, sent.opts).catch((e: Error) => ({
          status: 0,
          body: undefined,
          error: String(e.cause ?? e),
        })),
        hang,
      ]);
      clearTimeout(timer);
      if (process.env.FUZZ_DEBUG) (sent as Sent & { ms?: number }).ms = Date.now() - t0;
      into.push({ sent, res });
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
}
