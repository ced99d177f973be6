import { defineRoute, pageQuery } from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';
import {
  createRuleBody,
  firewallRuleSchema,
  ruleParams,
  ruleTagParams,
  tagBody,
  tagsBody,
  updateRuleBody,
} from './schemas';

const tags = ['firewall'];
const ruleAnswer = { 200: firewallRuleSchema };

/** Firewall rules (SPEC.md section 7, "Firewall rules"). */
export const firewallRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/firewall/rules',
    auth: ['user', 'apiKey'],
    role: 'observer',
    summary: 'List the namespace firewall rules, by priority',
    tags,
    schema: {
      query: T.Object(pageQuery, { additionalProperties: true }),
      response: { 200: T.Array(firewallRuleSchema) },
      headers: { 'X-Total-Count': 'Number of rules in the namespace.' },
    },
    async handler({ query, services, tenantId, ctx }) {
      const { items, total } = await services.firewall.list(tenantId(), query);
      ctx.set('X-Total-Count', String(total));
      ctx.set('Access-Control-Expose-Headers', 'X-Total-Count');
      return items;
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/firewall/rules',
    auth: ['user', 'apiKey'],
    role: 'administrator',
    summary: 'Create a firewall rule',
    description:
      'Rules are evaluated on every gateway connection: active rules only, lowest priority first, first match ' +
      'wins; without a match the connection is allowed. source_ip, username and filter.hostname are RE2 ' +
      'regular expressions.',
    tags,
    schema: { body: createRuleBody, response: ruleAnswer },
    async handler({ body, services, tenantId }) {
      return services.firewall.create(tenantId(), body);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/firewall/rules/:id',
    auth: ['user', 'apiKey'],
    role: 'observer',
    summary: 'Get a firewall rule',
    tags,
    schema: { params: ruleParams, response: ruleAnswer },
    async handler({ params, services, tenantId }) {
      return services.firewall.get(tenantId(), params.id);
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/firewall/rules/:id',
    auth: ['user', 'apiKey'],
    role: 'administrator',
    summary: 'Update a firewall rule',
    tags,
    schema: { params: ruleParams, body: updateRuleBody, response: ruleAnswer },
    async handler({ params, body, services, tenantId }) {
      return services.firewall.update(tenantId(), params.id, body);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/firewall/rules/:id',
    auth: ['user', 'apiKey'],
    role: 'administrator',
    summary: 'Delete a firewall rule',
    tags,
    schema: { params: ruleParams, response: ruleAnswer },
    async handler({ params, services, tenantId }) {
      return services.firewall.remove(tenantId(), params.id);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/firewall/rules/:id/tags',
    auth: ['user', 'apiKey'],
    role: 'administrator',
    summary: 'Add a tag to the rule filter',
    description: '406 when the rule already has 3 tags; a hostname filter becomes a tag filter.',
    tags,
    schema: { params: ruleParams, body: tagBody, response: ruleAnswer },
    async handler({ params, body, services, tenantId }) {
      return services.firewall.addTag(tenantId(), params.id, body.tag);
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/firewall/rules/:id/tags',
    auth: ['user', 'apiKey'],
    role: 'administrator',
    summary: 'Replace the tags of the rule filter',
    tags,
    schema: { params: ruleParams, body: tagsBody, response: ruleAnswer },
    async handler({ params, body, services, tenantId }) {
      return services.firewall.setTags(tenantId(), params.id, body.tags);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/firewall/rules/:id/tags',
    auth: ['user', 'apiKey'],
    role: 'administrator',
    summary: 'Remove a tag (named in the body) from the rule filter',
    description: '406 when it is the last tag of the filter.',
    tags,
    schema: { params: ruleParams, body: tagBody, response: ruleAnswer },
    async handler({ params, body, services, tenantId }) {
      return services.firewall.removeTag(tenantId(), params.id, body.tag);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/firewall/rules/:id/tags/:tag',
    auth: ['user', 'apiKey'],
    role: 'administrator',
    summary: 'Remove a tag (named in the path) from the rule filter',
    tags,
    schema: { params: ruleTagParams, response: ruleAnswer },
    async handler({ params, services, tenantId }) {
      return services.firewall.removeTag(tenantId(), params.id, params.tag);
    },
  }),
];
