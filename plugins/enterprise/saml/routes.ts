import { defineRoute, Invalid, TooManyRequests, Unauthorized } from '@gatehouse/core';
import { userAuth } from '@gatehouse/plugin-community';
import { Type as T } from '@sinclair/typebox';
import { consolePath, RETURN_PATH_MAX } from './return-path';
import { settingsInput, settingsView } from './schemas';
import { AssertionRefused } from './service';

const tags = ['users'];
const notEnabled = { 501: T.Object({ message: T.String() }) };
/** SAML single sign-on: the enterprise plugin's calls; other editions answer 501. */
export const samlRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/user/saml/auth',
    auth: ['none'],
    summary: 'Start a SAML sign-in',
    description:
      "Answers the identity provider's sign-in address with a new authentication request (signed when configured). " +
      'The request waits 10 minutes for its answer; at most `saml.startsPerSource` of one address and ' +
      '`saml.startsTotal` in all wait at once, and a start beyond answers 429 with `Retry-After`. ' +
      '`return_to` is the console page to come back to after the sign-in (a path of this server: it starts with a ' +
      'single `/`, without `//`, backslash, `#`, spaces or a scheme, else 400); it travels in RelayState. ' +
      '501 when SAML is not enabled or the edition is not enterprise.',
    tags,
    schema: {
      query: T.Object({
        return_to: T.Optional(
          T.String({ maxLength: RETURN_PATH_MAX, description: 'console path, e.g. /devices/<uid>' }),
        ),
      }),
      response: { 200: T.Object({ url: T.String({ format: 'uri' }) }), 429: null, ...notEnabled },
      headers: { 'Retry-After': 'With 429: seconds until a start may have room again.' },
    },
    async handler({ query, services, ctx }) {
      const returnTo = query.return_to === undefined ? undefined : consolePath(query.return_to);
      if (query.return_to !== undefined && !returnTo) {
        throw new Invalid(['return_to'], 'return_to must be a path of this console, such as /devices');
      }
      return { url: await services.saml.authUrl(ctx.ip, returnTo) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/user/saml/acs',
    auth: ['none'],
    summary: 'SAML assertion consumer (HTTP-POST binding)',
    description:
      "Where the identity provider posts its answer (`application/x-www-form-urlencoded`). A valid answer signs the person in and redirects (303) to the console with a one-time code (`<page>#sso=<code>`, exchanged at POST /api/user/saml/token); a refused one redirects to `<page>#sso-error=<reason>`. `<page>` is the console path in RelayState when it is one (as GET /api/user/saml/auth checks `return_to`), else `/`. An answer that answers no request (IdP-initiated) is refused (`#sso-error=unsolicited`) unless the administrator turned `idp_initiated` on: then it is accepted once, within 5 minutes of its IssueInstant, on any instance; and once an address had `auth.loginFailuresPerSource` answers refused within `auth.loginWindowSeconds`, its further answers are not read (`/#sso-error=busy`). Checked: the IdP's signature on the assertion (SHA-1 signatures and digests refused unless `saml.allowSha1`: `#sso-error=weak`), audience, recipient and destination, time window, the request it answers, and that it was not used before.",
    tags,
    status: 303,
    schema: {
      body: T.Object({
        SAMLResponse: T.String({ minLength: 1, description: 'the base64 SAML response' }),
        RelayState: T.Optional(T.String({ maxLength: 1024 })),
      }),
      response: { 303: null, ...notEnabled },
      headers: { Location: 'a console page, with `#sso=<code>` or `#sso-error=<reason>`' },
    },
    async handler({ body, services, ctx }) {
      // RelayState is not signed (anyone can change it on the way): it is checked here as at the start.
      const page = consolePath(body.RelayState) ?? '/';
      // A refused answer costs its source one failed sign-in of its budget, as a wrong password does; beyond the
      // budget an answer is not even read (parsing and checking a signed document is what an attacker would
      // make the server do over and over). A signed-in person gives the attempt back.
      let attempt: { refund(): Promise<void> };
      try {
        attempt = await services.sourceLimit.take('saml', ctx.ip);
      } catch (err) {
        if (!(err instanceof TooManyRequests)) throw err;
        services.log.warn({ ip: ctx.ip }, 'SAML answer not read: too many refused from this address');
        ctx.redirect(`${page}#sso-error=busy`);
        ctx.status = 303;
        return;
      }
      try {
        const code = await services.saml.consume(body);
        await attempt.refund();
        ctx.redirect(`${page}#sso=${code}`);
      } catch (err) {
        if (!(err instanceof AssertionRefused)) {
          await attempt.refund();
          throw err;
        }
        services.log.warn({ reason: err.reason, detail: err.message, ip: ctx.ip }, 'SAML answer refused');
        ctx.redirect(`${page}#sso-error=${err.reason}`);
      }
      ctx.status = 303;
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/user/saml/token',
    auth: ['none'],
    summary: 'Exchange the one-time code of a SAML sign-in for the user record with its token',
    description:
      'The code the assertion consumer gave the console is valid once, for a minute. The answer is the one a password sign-in gives.',
    tags,
    schema: {
      body: T.Object({ code: T.String({ minLength: 20, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$' }) }),
      response: { 200: userAuth, 401: null, ...notEnabled },
    },
    async handler({ body, services }) {
      return services.saml.exchange(body.code);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/user/saml/logout',
    auth: ['user'],
    summary: 'Sign out, and out of the identity provider (SAML single logout)',
    description:
      "Ends this token's sign-in as DELETE /api/auth/user does. When the sign-in came through SAML and the identity provider's metadata gives a single logout address (HTTP-Redirect), `url` is that address with a LogoutRequest for this person's IdP session, for the browser to follow; the IdP answers at GET /api/user/saml/slo. Otherwise `url` is empty. 501 when SAML is not enabled.",
    tags,
    schema: { response: { 200: T.Object({ url: T.String() }), ...notEnabled } },
    async handler({ caller, services }) {
      if (caller.kind !== 'user') throw new Unauthorized();
      return { url: await services.saml.logout(caller) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/user/saml/slo',
    auth: ['none'],
    summary:
      "SAML single logout: the identity provider's LogoutRequest or LogoutResponse (HTTP-Redirect binding)",
    description:
      "A LogoutResponse (to the LogoutRequest of POST /api/user/saml/logout) sends the browser to the console (303 to `/`). Both must carry the IdP's signature (`SigAlg`, `Signature`). A LogoutRequest: the Gatehouse sign-ins of the person it names (and of its session index, when given) end on every instance, and the browser goes back to the IdP with a LogoutResponse. A message that is refused sends the browser to `/#sso-error=<reason>`. 501 when SAML is not enabled or the IdP offers no single logout.",
    tags,
    status: 303,
    schema: {
      query: T.Object({
        SAMLRequest: T.Optional(T.String({ minLength: 1, maxLength: 65_536 })),
        SAMLResponse: T.Optional(T.String({ minLength: 1, maxLength: 65_536 })),
        RelayState: T.Optional(T.String({ maxLength: 1024 })),
        SigAlg: T.Optional(T.String({ maxLength: 256 })),
        Signature: T.Optional(T.String({ maxLength: 4096 })),
      }),
      response: { 303: null, 400: null, ...notEnabled },
      headers: { Location: 'the IdP with a LogoutResponse, the console, or `/#sso-error=<reason>`' },
    },
    async handler({ query, services, ctx }) {
      if (Boolean(query.SAMLRequest) === Boolean(query.SAMLResponse)) {
        throw new Invalid(['SAMLRequest'], 'give either SAMLRequest or SAMLResponse');
      }
      try {
        ctx.redirect(await services.saml.singleLogout(query as Record<string, string>, ctx.querystring));
      } catch (err) {
        if (!(err instanceof AssertionRefused)) throw err;
        services.log.warn(
          { reason: err.reason, detail: err.message, ip: ctx.ip },
          'SAML logout message refused',
        );
        ctx.redirect(`/#sso-error=${err.reason}`);
      }
      ctx.status = 303;
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/user/saml/metadata',
    auth: ['none'],
    summary: 'SAML service provider metadata',
    description:
      'This server as a SAML service provider (`application/samlmetadata+xml`), for the identity provider to import: entity ID, assertion consumer address, and the request-signing certificate when signing is on.',
    tags,
    schema: { response: { 200: T.String({ description: 'XML' }) } },
    async handler({ services, ctx }) {
      ctx.type = 'application/samlmetadata+xml';
      ctx.body = services.saml.metadata();
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/admin/saml',
    auth: ['user', 'local'],
    instanceAdmin: true,
    summary: 'SAML settings (instance administrators)',
    tags: ['instance'],
    schema: { response: { 200: settingsView } },
    async handler({ services }) {
      return services.saml.view();
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/api/admin/saml',
    auth: ['user', 'local'],
    instanceAdmin: true,
    summary: 'Change the SAML settings (instance administrators)',
    description:
      "Checked before they are saved (the IdP's metadata is read): 400 names the fields at fault. 403 when the saml.* config keys set SAML up. Every instance takes the change at once.",
    tags: ['instance'],
    schema: { body: settingsInput, response: { 200: settingsView, 403: null } },
    async handler({ body, caller, services }) {
      return services.saml.save(body, caller.kind === 'user' ? caller.userId : undefined);
    },
  }),
];
