import { defineRoute, pageQuery, type RegisterContext } from '@gatehouse/core';
import { type Static, Type as T } from '@sinclair/typebox';

/** `pluginConfig.hello` in the configuration: checked once at boot against this schema. */
export const configSchema = T.Object(
  {
    welcome: T.String({
      minLength: 1,
      maxLength: 40,
      default: 'Welcome,',
      description: 'The words before a device name in the greeting posted when a device is accepted.',
    }),
  },
  { additionalProperties: false },
);
export type HelloConfig = Static<typeof configSchema>;

const greeting = T.Object({
  id: T.Integer(),
  text: T.String(),
  author: T.String(),
  created_at: T.String({ format: 'date-time' }),
});

interface GreetingRow {
  id: number;
  tenant_id: string;
  text: string;
  author: string;
  created_at: Date;
}

const view = (row: GreetingRow) => ({
  id: row.id,
  text: row.text,
  author: row.author,
  created_at: new Date(row.created_at).toISOString(),
});

/** Routes as data: validation, the permission check and the OpenAPI document all come from these declarations. */
export const greetingRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/hello/greetings',
    auth: ['user', 'apiKey'],
    role: 'observer',
    summary: "The namespace's greetings, newest first",
    tags: ['hello'],
    paged: true,
    // `page` and `per_page` (1 to 100, default 10); the router sends the total as X-Total-Count.
    schema: { query: T.Object(pageQuery), response: { 200: T.Array(greeting) } },
    async handler({ query, services }) {
      // `tenant` is the caller's namespace: its queries cannot reach another namespace's rows.
      const rows = services.tenant.table<GreetingRow>('hello_greetings');
      const [{ count }] = (await rows.clone().count({ count: '*' })) as [{ count: string | number }];
      const items = (await rows
        .orderBy('id', 'desc')
        .limit(query.per_page)
        .offset((query.page - 1) * query.per_page)) as GreetingRow[];
      return { items: items.map(view), total: Number(count) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/hello/greetings',
    auth: ['user'],
    role: 'operator',
    summary: 'Post a greeting in the namespace',
    tags: ['hello'],
    schema: {
      body: T.Object({ text: T.String({ minLength: 1, maxLength: 140, pattern: '^[^\\u0000]*$' }) }),
      response: { 200: greeting },
    },
    async handler({ body, caller, services }) {
      const author = caller.kind === 'user' ? caller.username : 'unknown';
      const [row] = (await services.tenant
        .insert('hello_greetings', { text: body.text, author })
        .returning('*')) as GreetingRow[];
      return view(row as GreetingRow);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/hello/summary',
    // The operator's CLI calls this over the local socket; instance administrators may call it too.
    auth: ['user', 'local'],
    instanceAdmin: true,
    summary: 'How many greetings each namespace has (instance administration)',
    tags: ['hello'],
    schema: {
      response: { 200: T.Array(T.Object({ namespace: T.String(), greetings: T.Integer() })) },
    },
    async handler({ services }) {
      const rows = (await services
        .db('hello_greetings')
        .join('namespaces', 'namespaces.tenant_id', 'hello_greetings.tenant_id')
        .groupBy('namespaces.name')
        .orderBy('namespaces.name')
        .select('namespaces.name as namespace')
        .count({ greetings: '*' })) as { namespace: string; greetings: string | number }[];
      return rows.map((r) => ({ namespace: r.namespace, greetings: Number(r.greetings) }));
    },
  }),
];

/** The greetings feature: its routes, and a greeting posted whenever a device is accepted (a core event). */
export function register(ctx: RegisterContext): void {
  const { welcome } = ctx.pluginConfig as HelloConfig;
  ctx.routes(greetingRoutes);
  ctx.hooks.on('device.accepted', async ({ tenantId, uid }) => {
    const db = ctx.resolve('db');
    const device = (await db('devices').where({ tenant_id: tenantId, uid }).first('name')) as
      | { name: string }
      | undefined;
    await db('hello_greetings').insert({
      tenant_id: tenantId,
      text: `${welcome} ${device?.name ?? uid}!`,
      author: 'hello',
    });
  });
}
