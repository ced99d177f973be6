import { type Static, Type as T } from '@sinclair/typebox';

/** The roles an invitation may grant. */
export const grantable = T.Union([T.Literal('administrator'), T.Literal('operator'), T.Literal('observer')], {
  description: 'not above your own role; the owner role is never granted',
});
export const memberId = T.String({
  pattern: '^[0-9a-f]{24}$',
  description:
    'member id: the user id of the invitee, or the id an address without an account is invited under',
});
/** An invitation as the accept-invite page and the Members screen see it. */
export const invitation = T.Object({
  id: memberId,
  tenant_id: T.String({ format: 'uuid' }),
  namespace: T.String({ description: 'name of the namespace' }),
  email: T.String(),
  role: T.String(),
  status: T.Union([T.Literal('pending'), T.Literal('accepted'), T.Literal('expired')]),
  expires_at: T.String({ format: 'date-time' }),
  account: T.Boolean({ description: 'an account has this address (else the link leads to sign-up)' }),
});
export type InviteView = Static<typeof invitation>;
