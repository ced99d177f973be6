import { defineRoute, type Method, NotImplemented } from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';

/**
 * SAML single sign-on is the enterprise plugin's (plugins/enterprise/saml). Its calls answer
 * 501 in the other editions, so they are declared here as stand-ins that the enterprise plugin's routes replace
 * (the few calls that answer 501 elsewhere say so explicitly).
 */
const calls: [Method, string, string][] = [
  ['GET', '/api/user/saml/auth', 'Start a SAML sign-in (enterprise edition)'],
  ['POST', '/api/user/saml/acs', 'SAML assertion consumer (enterprise edition)'],
  ['POST', '/api/user/saml/token', 'Exchange a SAML sign-in code for a token (enterprise edition)'],
  ['GET', '/api/user/saml/metadata', 'SAML service provider metadata (enterprise edition)'],
  ['GET', '/api/admin/saml', 'SAML settings (enterprise edition)'],
  ['PUT', '/api/admin/saml', 'Change the SAML settings (enterprise edition)'],
];

export const samlStandIns = calls.map(([method, path, summary]) =>
  defineRoute({
    method,
    path,
    auth: ['none'],
    standIn: true,
    summary,
    description: 'Answers 501: SAML needs the enterprise edition.',
    tags: [path.startsWith('/api/admin/') ? 'instance' : 'users'],
    schema: { response: { 501: T.Object({ message: T.String() }) } },
    async handler() {
      throw new NotImplemented('SAML needs the enterprise edition');
    },
  }),
);
