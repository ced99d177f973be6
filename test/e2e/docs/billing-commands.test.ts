import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { agentAuthRequest } from '../../support/device-keys';
import { type LoginAnswer, startServer, type TestServer } from '../../support/server';
import { billingSettings, type FakeStripe, startFakeStripe } from '../../support/stripe';
import { docsDir } from './docs-site';

const run = promisify(execFile);
const page = join(docsDir, 'content', 'user-guides', 'settings', 'namespace', 'billing.md');

/** The `curl` blocks of the billing page, in order (the set-up block starts a server and is not one of them). */
function curlBlocks(): string[] {
  const text = readFileSync(page, 'utf8');
  return [...text.matchAll(/^```bash\n([\s\S]*?)^```/gm)]
    .map((m) => (m[1] ?? '').trim())
    .filter((block) => block.startsWith('curl '));
}

/**
 * The billing page's commands, run as written (with `curl -f`, so an error answer fails them) against a cloud
 * server billing through the local Stripe: a reader who follows the page in order ends up subscribed, with a card
 * and a device kept.
 */
describe('docs: the commands of the billing page', function () {
  this.timeout(60_000);
  let stripe: FakeStripe;
  let server: TestServer;
  let me: LoginAnswer;
  let device: string;

  before(async () => {
    stripe = await startFakeStripe();
    server = await startServer({
      edition: 'cloud',
      ssh: false,
      overrides: {
        billing: billingSettings(stripe),
      },
    });
    me = await server.setup();
    const res = await server.api(
      'POST',
      '/api/devices/auth',
      agentAuthRequest({
        tenant: me.tenant,
        hostname: 'docs-device',
        mac: '02:00:00:00:60:01',
        keyLabel: 'docs-billing',
      }),
    );
    device = res.body.uid;
    expect((await server.api('PATCH', `/api/devices/${device}/accept`, { token: me.token })).status).to.equal(
      200,
    );
  });
  after(async () => {
    await server?.stop();
    await stripe?.stop();
  });

  it('finds the commands on the page', () => {
    const blocks = curlBlocks();
    expect(blocks).to.have.length(4);
    for (const path of [
      'subscription',
      'price',
      'checkout',
      'paymentmethod/attach',
      'customer',
      'evaluate',
      'device-choice',
      'devices-most-used',
    ]) {
      expect(blocks.join('\n'), path).to.contain(`/api/billing/${path}`);
    }
  });

  it('runs each block in order, every call answering with success', async () => {
    const outputs: string[] = [];
    for (const block of curlBlocks()) {
      const script = block.replaceAll('https://gatehouse.example.com', server.url);
      const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], {
        env: { ...process.env, TOKEN: me.token, DEVICE: device },
      });
      outputs.push(stdout);
    }
    expect(outputs[0]).to.contain('"status":"inactive"');
    expect(outputs[0]).to.contain('"unit_amount":500,"currency":"usd","interval":"month"');
    expect(outputs[1]).to.match(/"url":"http:\/\/127\.0\.0\.1:\d+\/c\/pay\/cs_test_/);
    expect(outputs[1]).to.contain('"number":"**** **** **** 4242"');
    expect(outputs[2]).to.contain('"status":"active"');
    expect(outputs[2]).to.contain('"can_accept":true');
    expect(outputs[3]).to.contain(`"choices":["${device}"]`);
    const sub = await server.api('GET', '/api/billing/subscription', { token: me.token });
    expect(sub.body).to.include({ active: true, status: 'active' });
  });
});
