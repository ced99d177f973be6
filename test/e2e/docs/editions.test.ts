// The editions tables (the docs' editions page, released and next, and README's) say what
// each edition offers; this test starts a server of each edition and checks every claim
// against what that server really offers: its `GET /info`, its OpenAPI document and the
// device limit of a new namespace. A feature not built must read "planned" (or "no").
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect } from 'chai';
import { startServer, type TestServer } from '../../support/server';
import { docsDir } from './docs-site';

const repoDir = resolve(docsDir, '..');
const editions = ['community', 'enterprise', 'cloud'] as const;
type Edition = (typeof editions)[number];

interface Offer {
  info: { authentication: { local: boolean; saml: boolean }; endpoints: { ssh: string }; plugins: string[] };
  paths: Set<string>;
  /** The device limit of a namespace created by setup on this edition's server (-1 unlimited). */
  maxDevices: number;
  /** What `GET /api/user/saml/auth` answers. */
  samlStatus: number;
  /** What `GET /api/user/saml/metadata` answers: served wherever SAML is built, before it is set up. */
  samlMetadataStatus: number;
}

const has =
  (...paths: string[]) =>
  (o: Offer) =>
    paths.every((p) => o.paths.has(p));

/** How each feature named in the tables shows in a running server. */
const docsProbes: Record<string, (o: Offer) => boolean> = {
  'SSH gateway, web terminal, agent': (o) =>
    o.info.endpoints.ssh !== '' && has('/api/devices/auth', '/api/auth/ssh', '/api/terminal/tickets')(o),
  'Namespaces, members, roles': has('/api/namespaces', '/api/namespaces/{tenant}/members/{uid}'),
  'API keys, public keys, firewall rules': has(
    '/api/namespaces/api-key',
    '/api/sshkeys/public-keys',
    '/api/firewall/rules',
  ),
  'Session recording, tunnels, MFA': has(
    '/api/sessions/{uid}/records/{seat}',
    '/api/devices/{uid}/tunnels',
    '/api/user/mfa/enable',
  ),
  // Every edition owns the sign-in call; SAML is offered when it does not just answer 501. A server of the edition
  // that builds it serves its SP metadata before an administrator sets it up (then /info and the sign-in call say so).
  'Custom device fields': has('/api/devices/{uid}/custom_fields/{key}', '/api/devices/custom_fields'),
  'Watching live sessions': has('/api/sessions/{uid}/live'),
  'SAML single sign-on': (o) =>
    o.info.authentication.saml || o.samlStatus !== 501 || o.samlMetadataStatus === 200,
  'Container-engine connectors': has('/api/connector', '/api/connector/{uid}'),
  'Sign-up, e-mail invitations, password recovery by e-mail': has(
    '/api/register',
    '/api/namespaces/{tenant}/members/invites',
    '/api/user/recover_password',
  ),
  'Billing and subscriptions': has('/api/billing/subscription', '/api/billing/customer'),
  'Announcements feed': has('/api/announcements'),
};

const readmeProbes: Record<string, (o: Offer) => boolean> = {
  namespaces: has('/api/namespaces'),
  'members and roles': has('/api/namespaces/{tenant}/members/{uid}'),
  'API keys': has('/api/namespaces/api-key'),
  MFA: has('/api/user/mfa/enable'),
  devices: has('/api/devices', '/api/devices/auth'),
  'devices and their install keys': has('/api/devices', '/api/devices/auth', '/api/namespaces/install-keys'),
  tags: has('/api/tags'),
  'custom device fields': has('/api/devices/{uid}/custom_fields/{key}'),
  'SSH gateway': (o) => o.info.endpoints.ssh !== '' && o.paths.has('/api/auth/ssh'),
  'public keys': has('/api/sshkeys/public-keys'),
  'firewall rules': has('/api/firewall/rules'),
  'sessions and recordings': has('/api/sessions', '/api/sessions/{uid}/records/{seat}'),
  'watching live sessions': has('/api/sessions/{uid}/live'),
  'HTTP tunnels': has('/api/devices/{uid}/tunnels'),
  'SAML single sign-on': docsProbes['SAML single sign-on'] as (o: Offer) => boolean,
  'container-engine connectors': docsProbes['Container-engine connectors'] as (o: Offer) => boolean,
  billing: has('/api/billing/subscription'),
  'e-mail invites': has('/api/namespaces/{tenant}/members/invites'),
  'sign-up': has('/api/register'),
  announcements: has('/api/announcements'),
  'account deletion': (o) => o.paths.has('/api/user'),
  'a device limit of 3 for new namespaces': (o) => o.maxDevices === 3,
};

/** Rows of the first Markdown table after `marker` whose header starts with `header`. */
function tableRows(text: string, header: RegExp): string[][] {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => header.test(l));
  expect(start, `a table headed ${header}`).to.be.greaterThan(-1);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split('|')
        .map((c) => c.trim()),
    );
  }
  return rows;
}

describe('the editions tables against what each edition really offers', function () {
  this.timeout(180_000);
  const offers = new Map<Edition, Offer>();
  const servers: TestServer[] = [];

  before(async () => {
    for (const edition of editions) {
      const server = await startServer({ edition, ssh: true });
      servers.push(server);
      const me = await server.setup();
      const info = (await server.api('GET', '/info')).body;
      // The document the server publishes for its edition (community and cloud are served at /openapi/).
      const served = await server.api('GET', `/openapi/${edition}.json`);
      const doc = (served.status === 200 ? served.body : server.kernel.openapi()) as {
        paths: Record<string, unknown>;
      };
      const ns = (await server.api('GET', `/api/namespaces/${me.tenant}`, { token: me.token })).body;
      const saml = await server.api('GET', '/api/user/saml/auth');
      const samlMetadata = await server.api('GET', '/api/user/saml/metadata');
      offers.set(edition, {
        info,
        paths: new Set(Object.keys(doc.paths)),
        maxDevices: ns.max_devices,
        samlStatus: saml.status,
        samlMetadataStatus: samlMetadata.status,
      });
    }
  });
  after(async () => {
    for (const server of servers) await server.stop();
  });

  it('reads what each edition offers from its own server', () => {
    for (const edition of editions) {
      const offer = offers.get(edition) as Offer;
      expect(offer.info.plugins, edition).to.include(edition);
      expect(offer.paths.size, edition).to.be.greaterThan(30);
    }
  });

  for (const version of ['content', 'versioned_docs/version-0.1']) {
    it(`matches every cell of the editions page (${version})`, () => {
      const text = readFileSync(join(docsDir, version, 'overview', 'editions.md'), 'utf8');
      const rows = tableRows(text, /^\| *\| *Community *\| *Enterprise *\| *Cloud *\|/);
      const wrong: string[] = [];
      const seen = new Set<string>();
      for (const [feature = '', ...cells] of rows) {
        seen.add(feature);
        if (feature === 'Hosting') {
          // No hosted service exists: the cloud cell must say it is planned.
          expect(cells[2], 'Hosting, cloud').to.match(/^planned\b/);
          continue;
        }
        if (feature === 'Default device limit of a new namespace') {
          editions.forEach((edition, i) => {
            const max = (offers.get(edition) as Offer).maxDevices;
            if (cells[i] !== (max === -1 ? 'unlimited' : String(max)))
              wrong.push(`${feature} / ${edition}: says "${cells[i]}", the server gives ${max}`);
          });
          continue;
        }
        const probe = docsProbes[feature];
        if (!probe) {
          wrong.push(`${feature}: no way to check this row; add a probe to this test`);
          continue;
        }
        editions.forEach((edition, i) => {
          const cell = cells[i] ?? '';
          const offered = probe(offers.get(edition) as Offer);
          const says = cell === 'yes' ? true : /^(planned|no)\b/.test(cell) ? false : undefined;
          if (says === undefined) wrong.push(`${feature} / ${edition}: "${cell}" is not yes, no or planned`);
          else if (says !== offered)
            wrong.push(
              `${feature} / ${edition}: says "${cell}", the server ${offered ? 'offers' : 'lacks'} it`,
            );
        });
      }
      expect(wrong).to.deep.equal([]);
      // The current page names every feature; a frozen release's page predates the later ones.
      if (version === 'content')
        for (const feature of Object.keys(docsProbes)) expect(seen, feature).to.include(feature);
    });
  }

  it('says "answers 501" for SAML in community, as the server does', () => {
    expect((offers.get('community') as Offer).samlStatus).to.equal(501);
  });

  it("matches README's edition table: what it adds is offered, what is planned is not", () => {
    const rows = tableRows(
      readFileSync(join(repoDir, 'README.md'), 'utf8'),
      /^\| edition \| plugins \| adds \|/,
    );
    const wrong: string[] = [];
    expect(rows.map((r) => r[0])).to.deep.equal(['`community` (default)', '`enterprise`', '`cloud`']);
    rows.forEach(([, plugins = '', adds = ''], i) => {
      const edition = editions[i] as Edition;
      const offer = offers.get(edition) as Offer;
      expect(plugins.split(', ')).to.deep.equal(offer.info.plugins);
      const [built = '', planned = ''] = adds.includes('planned:')
        ? [adds.slice(0, adds.indexOf('planned:')), adds.slice(adds.indexOf('planned:') + 'planned:'.length)]
        : [adds, ''];
      const names = (part: string) =>
        part
          .split(/[,;]/)
          .map((s) => s.trim())
          .filter(Boolean);
      for (const [feature, expected] of [
        ...names(built).map((f) => [f, true] as const),
        ...names(planned).map((f) => [f, false] as const),
      ]) {
        const probe = readmeProbes[feature];
        if (!probe) wrong.push(`${edition}: "${feature}" has no probe; add one to this test`);
        else if (probe(offer) !== expected)
          wrong.push(
            `${edition}: "${feature}" is ${expected ? 'listed as built' : 'planned'}, but it is ${expected ? 'not offered' : 'offered'}`,
          );
      }
    });
    expect(wrong).to.deep.equal([]);
  });
});
