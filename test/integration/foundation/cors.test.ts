import { expect } from 'chai';
import { startServer, type TestServer } from '../../support/server';

/**
 * The docs site's "Try it" calls a Gatehouse server from another origin. Only origins listed in
 * `http.corsOrigins` (GATEHOUSE_CORS_ORIGINS) may; every other origin gets no CORS header, as before.
 */
describe('cross-origin calls from listed origins only', () => {
  let server: TestServer;
  let token: string;
  const docs = 'https://docs.gatehouse.test';

  before(async () => {
    server = await startServer({
      ssh: false,
      overrides: { http: { corsOrigins: `${docs}, https://other.test/` } },
    });
    token = (await server.setup()).token;
  });
  after(async () => server?.stop());

  const preflight = (origin: string, path = '/api/devices') =>
    fetch(`${server.url}${path}`, {
      method: 'OPTIONS',
      headers: {
        Origin: origin,
        'Access-Control-Request-Method': 'GET',
        'Access-Control-Request-Headers': 'authorization',
      },
    });

  it('answers the preflight of a listed origin, with the headers Try it sends', async () => {
    for (const origin of [docs, 'https://other.test']) {
      const res = await preflight(origin);
      expect(res.status, origin).to.equal(204);
      expect(res.headers.get('access-control-allow-origin')).to.equal(origin);
      expect(res.headers.get('access-control-allow-headers')).to.match(/Authorization/);
      expect(res.headers.get('access-control-allow-headers')).to.match(/X-API-Key/);
      expect(res.headers.get('access-control-allow-methods')).to.match(/PATCH/);
      expect(res.headers.get('access-control-allow-credentials')).to.equal(null);
    }
  });

  it('lets a listed origin read answers, errors and the total count', async () => {
    const list = await fetch(`${server.url}/api/devices`, {
      headers: { Origin: docs, Authorization: `Bearer ${token}` },
    });
    expect(list.status).to.equal(200);
    expect(list.headers.get('access-control-allow-origin')).to.equal(docs);
    expect(list.headers.get('access-control-expose-headers')).to.match(/X-Total-Count/);
    expect(list.headers.get('vary')).to.match(/Origin/i);
    const refused = await fetch(`${server.url}/api/devices`, { headers: { Origin: docs } });
    expect(refused.status).to.equal(401);
    expect(refused.headers.get('access-control-allow-origin')).to.equal(docs);
  });

  it('gives other origins, and paths outside the API, no CORS header at all', async () => {
    const stranger = await preflight('https://evil.test');
    expect(stranger.headers.get('access-control-allow-origin')).to.equal(null);
    const read = await fetch(`${server.url}/api/devices`, {
      headers: { Origin: 'https://evil.test', Authorization: `Bearer ${token}` },
    });
    expect(read.headers.get('access-control-allow-origin')).to.equal(null);
    const outside = await preflight(docs, '/metrics');
    expect(outside.headers.get('access-control-allow-origin')).to.equal(null);
  });

  it('allows no origin by default', async () => {
    const plain = await startServer({ ssh: false });
    try {
      const res = await fetch(`${plain.url}/info`, { headers: { Origin: docs } });
      expect(res.headers.get('access-control-allow-origin')).to.equal(null);
    } finally {
      await plain.stop();
    }
  });
});
