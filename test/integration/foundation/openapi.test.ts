import { createKernel } from '@gatehouse/server';
import { Validator } from '@seriousme/openapi-schema-validator';
import { expect } from 'chai';
import { startServer, type TestServer } from '../../support/server';

describe('OpenAPI documents', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ ssh: false });
  });
  after(async () => {
    await server?.stop();
  });

  for (const edition of ['community', 'cloud']) {
    it(`serves a valid OpenAPI 3.1 document for the ${edition} edition listing every route`, async () => {
      const res = await server.api('GET', `/openapi/${edition}.json`);
      expect(res.status).to.equal(200);
      const validator = new Validator();
      const result = await validator.validate(res.body);
      expect(result.errors ?? [], JSON.stringify(result.errors)).to.deep.equal([]);
      expect(result.valid).to.equal(true);
      expect(res.body.openapi).to.equal('3.1.0');

      const kernel = await createKernel({
        env: {},
        overrides: { edition, log: { level: 'silent', pretty: false } },
      });
      const documented = new Set<string>();
      for (const [p, ops] of Object.entries(res.body.paths as Record<string, Record<string, unknown>>)) {
        for (const m of Object.keys(ops)) documented.add(`${m.toUpperCase()} ${p}`);
      }
      const routes = kernel.routes.map((r) => `${r.method} ${r.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`);
      expect(routes.length).to.be.greaterThan(3);
      expect([...documented].sort()).to.deep.equal([...new Set(routes)].sort());
    });
  }

  it('marks query parameters with a default as optional, as the server treats them', async () => {
    const doc = (await server.api('GET', '/openapi/community.json')).body;
    const params = (p: string, m: string) =>
      Object.fromEntries(
        (doc.paths[p][m].parameters as { name: string; required: boolean }[]).map((x) => [
          x.name,
          x.required,
        ]),
      );
    expect(params('/api/devices', 'get')).to.include({
      page: false,
      per_page: false,
      status: false,
      filter: false,
    });
    expect(params('/api/devices/{uid}', 'get')).to.include({ uid: true });
    const res = await server.api('GET', '/api/devices');
    expect(res.status, 'no query at all is fine').to.be.oneOf([200, 401]);
  });

  it('documents the security schemes and the 401 answer of authenticated calls', async () => {
    const doc = (await server.api('GET', '/openapi/community.json')).body;
    expect(doc.components.securitySchemes).to.have.keys(['jwt', 'api-key']);
    expect(doc.components.securitySchemes['api-key']).to.include({ in: 'header', name: 'X-API-Key' });
    const me = doc.paths['/api/auth/user'].get;
    expect(me.security).to.deep.equal([{ jwt: [] }]);
    expect(me.responses).to.have.property('401');
    expect(doc.paths['/info'].get.security).to.deep.equal([{}]);
  });

  it('says every body refuses unknown fields, and that parameters with a default may be left out', async () => {
    const doc = (await server.api('GET', '/openapi/community.json')).body;
    const put = doc.paths['/api/firewall/rules/{id}'].put;
    expect(put.requestBody.content['application/json'].schema.additionalProperties).to.equal(false);
    const params = doc.paths['/api/devices'].get.parameters as { name: string; required: boolean }[];
    expect(params.find((p) => p.name === 'page')?.required).to.equal(false);
    expect(params.find((p) => p.name === 'sort_by')?.required).to.equal(false);
  });
});
