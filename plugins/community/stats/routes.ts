import { defineRoute } from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';

const stats = T.Object({
  registered_devices: T.Integer({ description: 'Accepted devices and containers.' }),
  online_devices: T.Integer(),
  pending_devices: T.Integer(),
  rejected_devices: T.Integer(),
  active_sessions: T.Integer(),
});

/** `GET /api/stats` (SPEC.md section 3, Stats). */
export const statsRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/stats',
    auth: ['user', 'apiKey'],
    role: 'observer',
    summary: 'Namespace statistics',
    tags: ['devices'],
    schema: { response: { 200: stats } },
    async handler({ services, tenantId }) {
      const tenant = tenantId();
      const sessions = { active_sessions: 0 };
      await services.hooks.run('stats.collect', { tenantId: tenant, stats: sessions });
      return { ...(await services.namespaceDevices.counts()), ...sessions };
    },
  }),
];
