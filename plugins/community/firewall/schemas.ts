import { type Static, Type as T } from '@sinclair/typebox';
import { deviceFilterSchema, tagSchema } from '../matching/schemas';

const pattern = (what: string) =>
  T.String({ minLength: 1, maxLength: 255, description: `Regular expression (RE2) on the ${what}.` });

export const ruleIdSchema = T.String({
  pattern: '^[0-9a-f]{24}$',
  description: 'Rule id, 24 hex characters.',
});

export const firewallRuleSchema = T.Object({
  id: ruleIdSchema,
  tenant_id: T.String({ format: 'uuid' }),
  action: T.Union([T.Literal('allow'), T.Literal('deny')]),
  active: T.Boolean(),
  filter: deviceFilterSchema,
  priority: T.Integer({ minimum: 0 }),
  source_ip: T.String(),
  username: T.String(),
});
/** The firewall rule entity as the API answers it. */
export type FirewallRuleView = Static<typeof firewallRuleSchema>;

const ruleFields = {
  action: T.Union([T.Literal('allow'), T.Literal('deny')], { description: 'What a match does.' }),
  active: T.Boolean({ description: 'Inactive rules are kept but not evaluated.' }),
  filter: deviceFilterSchema,
  priority: T.Integer({ minimum: 0, maximum: 2147483647, description: 'Lower numbers are evaluated first.' }),
  source_ip: pattern('source IP address'),
  username: pattern('device user name'),
};

export const createRuleBody = T.Object({
  ...ruleFields,
  active: T.Optional(ruleFields.active),
});
export const updateRuleBody = T.Partial(T.Object(ruleFields));
/** The fields of a rule a change may set. */
export type RuleFields = Static<typeof updateRuleBody>;

export const ruleParams = T.Object({ id: ruleIdSchema });
export const ruleTagParams = T.Object({ id: ruleIdSchema, tag: tagSchema });
