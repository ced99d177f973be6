import { defineRoute, pageQuery } from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';
import { filterTagRoutes } from '../matching/filter-tag-routes';
import { createRuleBody, firewallRuleSchema, ruleParams, ruleTagParams, updateRuleBody } from './schemas';

const tags = ['firewall'];
const ruleAnswer = { 200: firewallRuleSchema };

/** Firewall rules. */
export const firewallRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/firewall/rules',
    auth: ['user', 'apiKey'],
    role: 'observer',
    summary: 'List the namespace firewall rules, by priority',
    tags,
    paged: true,
    schema: {
      query: T.Object(pageQuery, { additionalProperties: true }),
      response: { 200: T.Array(firewallRuleSchema) },
      headers: { 'X-Total-Count': 'Number of rules in the namespace.' },
    },
    handler: ({ query, services }) => services.firewallRules.list(query),
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
    handler({ body, services }) {
      return services.firewallRules.create(body);
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
    handler({ params, services }) {
      return services.firewallRules.get(params.id);
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
    handler({ params, body, services }) {
      return services.firewallRules.update(params.id, body);
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
    handler({ params, services }) {
      return services.firewallRules.remove(params.id);
    },
  }),
  ...filterTagRoutes({
    path: '/api/firewall/rules/:id',
    key: 'id',
    params: ruleParams,
    tagParams: ruleTagParams,
    answer: firewallRuleSchema,
    noun: 'rule',
    tags,
    holder: (services) => services.firewallRules,
    removeInBody: true,
    descriptions: {
      add: '406 when the rule already has 3 tags; a hostname filter becomes a tag filter.',
      removeInBody: '406 when it is the last tag of the filter.',
    },
  }),
];
