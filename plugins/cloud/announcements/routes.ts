import { defineRoute, pageQuery } from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';
import { announcement, announcementSummary } from './schemas';

const tags = ['announcements'];
const uuidParams = T.Object({ uuid: T.String({ format: 'uuid' }) });
/** Announcement titles: at most 90 characters. */
const title = T.String({ minLength: 1, maxLength: 90 });
const content = T.String({ minLength: 1, maxLength: 65536, description: 'Markdown' });
const seen = T.Object({ seen: T.Boolean() });
const admin: ['user', 'local'] = ['user', 'local'];

/** Announcements: read by anyone; published, edited and withdrawn by instance administrators. */
export const announcementRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/announcements',
    auth: ['none'],
    paged: true,
    summary: 'List announcements (short form)',
    tags,
    schema: {
      query: T.Object({
        ...pageQuery,
        order_by: T.Union([T.Literal('asc'), T.Literal('desc')], { default: 'desc', description: 'by date' }),
      }),
      response: { 200: T.Array(announcementSummary) },
    },
    async handler({ query, services }) {
      return services.announcements.list(query);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/announcements/:uuid',
    auth: ['none'],
    summary: 'Get an announcement',
    tags,
    schema: { params: uuidParams, response: { 200: announcement, 404: null } },
    async handler({ params, services }) {
      return services.announcements.get(params.uuid);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/announcements/:uuid/seen',
    auth: ['user'],
    summary: 'Whether you have seen an announcement',
    description: 'The console shows a new announcement once per user, whatever browser they use.',
    tags,
    schema: { params: uuidParams, response: { 200: seen, 404: null } },
    async handler({ caller, params, services }) {
      if (caller.kind !== 'user') return;
      return services.announcements.seen(caller.userId, params.uuid);
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/announcements/:uuid/seen',
    auth: ['user'],
    summary: 'Mark an announcement seen',
    description: 'Once seen, the console does not show it to you again, in any browser.',
    tags,
    schema: { params: uuidParams, response: { 200: seen, 404: null } },
    async handler({ caller, params, services }) {
      if (caller.kind !== 'user') return;
      return services.announcements.markSeen(caller.userId, params.uuid);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/admin/announcements',
    auth: admin,
    instanceAdmin: true,
    summary: 'Publish an announcement',
    tags: ['instance'],
    schema: { body: T.Object({ title, content }), response: { 200: announcement } },
    async handler({ body, services }) {
      return services.announcements.publish(body);
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/admin/announcements/:uuid',
    auth: admin,
    instanceAdmin: true,
    summary: 'Edit an announcement',
    tags: ['instance'],
    schema: {
      params: uuidParams,
      body: T.Object({ title: T.Optional(title), content: T.Optional(content) }),
      response: { 200: announcement, 404: null },
    },
    async handler({ params, body, services }) {
      return services.announcements.edit(params.uuid, body);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/admin/announcements/:uuid',
    auth: admin,
    instanceAdmin: true,
    summary: 'Withdraw an announcement',
    tags: ['instance'],
    schema: { params: uuidParams, response: { 200: T.Object({}), 404: null } },
    async handler({ params, services }) {
      await services.announcements.withdraw(params.uuid);
      return {};
    },
  }),
];
