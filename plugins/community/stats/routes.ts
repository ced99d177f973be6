import { defineRoute } from '@gatehouse/core';
import { type Stats, stats } from './schemas';

/** `GET /api/stats`. */
export const statsRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/stats',
    auth: ['user', 'apiKey'],
    role: 'observer',
    summary: 'Namespace statistics',
    tags: ['devices'],
    schema: { response: { 200: stats } },
    async handler({ services, tenantId }): Promise<Stats> {
      const tenant = tenantId();
      const sessions = { active_sessions: 0 };
      await services.hooks.run('stats.collect', { tenantId: tenant, stats: sessions });
      return { ...(await services.namespaceDevices.counts()), ...sessions };
    },
  }),
];
