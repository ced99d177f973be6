import { expect } from 'chai';
import { startServer, type TestServer } from '../support/server';

/**
 * A security review (lesser leaks): "/metrics is public". Prometheus metrics (routes, counts, timings, process details) are
 * served on the internal listener; on the public one only with `metrics.token` as a bearer token.
 */
describe('security: /metrics is internal or token-protected', function () {
  this.timeout(60_000);

  describe('without a token (the default)', () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ ssh: false });
    });
    after(async () => {
      await server?.stop();
    });

    it('answers 404 on the public listener, with or without credentials, and serves the internal one', async () => {
      expect((await server.api('GET', '/metrics')).status).to.equal(404);
      const withBearer = await server.api('GET', '/metrics', {
        headers: { authorization: 'Bearer anything-at-all-1234' },
      });
      expect(withBearer.status).to.equal(404);
      const internal = await fetch(`${server.kernel.internalUrl}/metrics`);
      expect(internal.status).to.equal(200);
      const text = await internal.text();
      expect(text).to.match(/gatehouse_http_requests_total/);
      // What recording lost or holds for retrying is seen here before on any session's page.
      for (const name of [
        'gatehouse_recording_write_failures_total',
        'gatehouse_recording_lost_bytes_total',
        'gatehouse_recording_retrying_bytes',
        'gatehouse_recording_unwritten_bytes',
      ])
        expect(text).to.match(new RegExp(`^${name} \\d+$`, 'm'), name);
    });
  });

  describe('with metrics.token', () => {
    const token = 'a-long-scrape-token-0123456789';
    let server: TestServer;
    before(async () => {
      server = await startServer({ ssh: false, overrides: { metrics: { token } } });
    });
    after(async () => {
      await server?.stop();
    });

    it('serves the public listener only to that bearer token', async () => {
      expect((await server.api('GET', '/metrics')).status).to.equal(401);
      const wrong = await server.api('GET', '/metrics', { headers: { authorization: `Bearer ${token}x` } });
      expect(wrong.status).to.equal(401);
      const right = await server.api('GET', '/metrics', { headers: { authorization: `Bearer ${token}` } });
      expect(right.status).to.equal(200);
      expect(right.body).to.match(/gatehouse_http_requests_total/);
    });
  });
});
