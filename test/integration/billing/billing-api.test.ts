import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import Stripe from 'stripe';
import { agentAuthRequest } from '../../support/device-keys';
import { clientOptions, keyOptions } from '../../support/openssh';
import { type LoginAnswer, startServer, type TestServer } from '../../support/server';
import { billingSettings, type FakeStripe, startFakeStripe } from '../../support/stripe';

/**
 * Billing of the cloud edition through its API, against the official Stripe SDK talking to a local
 * Stripe (test/support/stripe.ts): customer and cards, subscription and invoices, the 402 beyond the free devices,
 * usage reported to the provider, webhooks verified by signature, 424 when the provider is away, and a lapsed
 * subscription keeping only the chosen devices reachable through the SSH gateway.
 */
const TUNNELS = 'tunnels.billing.test';

/** A request through the HTTP tunnel at `address` (a WebSocket upgrade with `upgrade`): its status and page. */
function viaTunnel(server: TestServer, address: string, upgrade = false) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const port = new URL(server.url).port;
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/',
        headers: {
          host: `${address}.${TUNNELS}:${port}`,
          ...(upgrade
            ? {
                connection: 'Upgrade',
                upgrade: 'websocket',
                'sec-websocket-version': '13',
                'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
              }
            : {}),
        },
      },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => {
          body += c.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      },
    );
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, body: '' });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('billing (cloud): the API against a local Stripe', function () {
  this.timeout(60_000);
  let stripe: FakeStripe;
  let server: TestServer;
  let me: LoginAnswer;
  const devices: { uid: string; name: string }[] = [];

  const api = (method: string, path: string, body?: unknown, token = me.token) =>
    server.api(method, path, { token, body });
  const register = async (n: number) => {
    const res = await server.api(
      'POST',
      '/api/devices/auth',
      agentAuthRequest({
        tenant: me.tenant,
        hostname: `billed-${n}`,
        mac: `02:00:00:00:20:${String(n).padStart(2, '0')}`,
        keyLabel: `billing-key-${n}`,
      }),
    );
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body as { uid: string; name: string };
  };
  const quantityAtStripe = async (subscription: string) => {
    const sub = await stripe.sdk.subscriptions.retrieve(subscription);
    return sub.items.data[0]?.quantity;
  };

  before(async () => {
    stripe = await startFakeStripe();
    server = await startServer({
      edition: 'cloud',
      overrides: {
        // A second namespace is made (and deleted) by the same owner.
        limits: {
          registrationsPerMinute: 1000,
          pendingPerSource: 1000,
          pendingPerBlock: 1000,
          maxNamespaces: -1,
        },
        tunnels: { domain: TUNNELS },
        billing: billingSettings(stripe),
      },
    });
    stripe.webhookUrl = `${server.url}/api/billing/webhook`;
    me = await server.setup();
    for (let n = 1; n <= 5; n++) devices.push(await register(n));
  });
  after(async () => {
    await server?.stop();
    await stripe?.stop();
  });

  it('starts without subscription or customer: inactive, 404, and the free devices can be accepted', async () => {
    const sub = await api('GET', '/api/billing/subscription');
    expect(sub.status).to.equal(200);
    expect(sub.body).to.deep.equal({ id: '', active: false, status: 'inactive', end_at: 0, invoices: [] });
    expect((await api('GET', '/api/billing/customer')).status).to.equal(404);
    expect((await api('POST', '/api/billing/evaluate')).body).to.deep.equal({
      can_accept: true,
      can_connect: true,
    });
    const ns = await api('GET', `/api/namespaces/${me.tenant}`);
    expect(ns.body.max_devices).to.equal(3);
    // The Namespace entity's billing: null until the namespace has a customer.
    expect(ns.body.billing).to.equal(null);
  });

  it('accepts three devices for free and answers 402 on the fourth without a subscription', async () => {
    for (const d of devices.slice(0, 3)) {
      expect((await api('PATCH', `/api/devices/${d.uid}/accept`)).status).to.equal(200);
    }
    const fourth = await api('PATCH', `/api/devices/${devices[3]?.uid}/accept`);
    expect(fourth.status).to.equal(402);
    expect(fourth.body.code).to.equal('subscription_required');
    expect(fourth.body.message).to.match(/3 devices .* free.*subscription/);
    const again = await api('PATCH', `/api/devices/${devices[3]?.uid}/accept`);
    expect(again.status).to.equal(402);
    expect((await api('GET', `/api/devices/${devices[3]?.uid}`)).body.status).to.equal('pending');
    expect((await api('POST', '/api/billing/evaluate')).body).to.deep.equal({
      can_accept: false,
      can_connect: true,
    });
    // Subscribing needs a card first.
    const early = await api('POST', '/api/billing/subscription');
    expect(early.status).to.equal(402);
    expect(early.body.code).to.equal('payment_method_required');
  });

  it("makes the namespace's customer once, with the owner's name and e-mail", async () => {
    const made = await api('POST', '/api/billing/customer');
    expect(made.status, JSON.stringify(made.body)).to.equal(200);
    expect(made.body.id).to.match(/^cus_/);
    expect(made.body).to.include({ name: 'Ada Admin', email: 'ada@example.com' });
    expect(made.body.payment_methods).to.deep.equal([]);
    const again = await api('POST', '/api/billing/customer');
    expect(again.body.id).to.equal(made.body.id);
    expect((await api('GET', '/api/billing/customer')).body.id).to.equal(made.body.id);
    const atStripe = (await stripe.sdk.customers.retrieve(made.body.id)) as Stripe.Customer;
    expect(atStripe.metadata).to.deep.equal({ tenant_id: me.tenant });
    const { billing } = (await api('GET', `/api/namespaces/${me.tenant}`)).body;
    expect(billing).to.deep.equal({ customer_id: made.body.id, created_at: billing.created_at });
    expect(Date.parse(billing.created_at)).to.be.closeTo(Date.now(), 60_000);
  });

  it('attaches, lists, defaults and detaches cards, and refuses cards that are not the namespace’s', async () => {
    const visa = await api('POST', '/api/billing/paymentmethod/attach', { id: 'pm_card_visa' });
    expect(visa.status, JSON.stringify(visa.body)).to.equal(200);
    expect(visa.body.payment_methods).to.have.length(1);
    const card = visa.body.payment_methods[0];
    expect(card).to.include({ number: '**** **** **** 4242', brand: 'visa', cvc: 'pass', default: true });
    expect(card.id).to.match(/^pm_/);
    expect(card.exp_year).to.be.greaterThan(new Date().getFullYear());

    const master = await api('POST', '/api/billing/paymentmethod/attach', { id: 'pm_card_mastercard' });
    expect(master.body.payment_methods).to.have.length(2);
    const mc = master.body.payment_methods.find((m: { brand: string }) => m.brand === 'mastercard');
    expect(mc.default).to.equal(false);
    const defaulted = await api('POST', '/api/billing/paymentmethod/default', { id: mc.id });
    expect(defaulted.status).to.equal(200);
    expect(defaulted.body.payment_methods.find((m: { id: string }) => m.id === mc.id).default).to.equal(true);

    const detached = await api('POST', '/api/billing/paymentmethod/detach', { id: card.id });
    expect(detached.status).to.equal(200);
    expect(detached.body.payment_methods.map((m: { id: string }) => m.id)).to.deep.equal([mc.id]);

    expect(
      (await api('POST', '/api/billing/paymentmethod/attach', { id: 'pm_nonexistent' })).status,
    ).to.equal(404);
    // A card of another customer of the same Stripe account is not this namespace's.
    const stranger = await stripe.sdk.customers.create({ email: 'stranger@example.com' });
    const theirs = await stripe.sdk.paymentMethods.attach('pm_card_visa', { customer: stranger.id });
    for (const call of ['detach', 'default']) {
      expect(
        (await api('POST', `/api/billing/paymentmethod/${call}`, { id: theirs.id })).status,
        call,
      ).to.equal(404);
    }
    expect((await stripe.sdk.paymentMethods.retrieve(theirs.id)).customer).to.equal(stranger.id);
    for (const body of [{}, { id: '' }, { id: 'pm_1', extra: 1 }, { id: 'pm;drop' }, { id: 7 }]) {
      expect(
        (await api('POST', '/api/billing/paymentmethod/attach', body)).status,
        JSON.stringify(body),
      ).to.equal(400);
    }
  });

  it('subscribes: active, the first invoice paid, one unit per accepted device at Stripe', async () => {
    const sub = await api('POST', '/api/billing/subscription');
    expect(sub.status, JSON.stringify(sub.body)).to.equal(200);
    expect(sub.body).to.include({ active: true, status: 'active' });
    expect(sub.body.id).to.match(/^sub_/);
    expect(sub.body.end_at).to.be.greaterThan(Date.now() / 1000 + 20 * 86400);
    expect(sub.body.invoices).to.deep.equal([
      { id: sub.body.invoices[0].id, status: 'paid', currency: 'usd', amount: 1500 },
    ]);
    expect(await quantityAtStripe(sub.body.id)).to.equal(3);
    const again = await api('POST', '/api/billing/subscription');
    expect(again.body.id).to.equal(sub.body.id);
    // The namespace, alone and in the list, carries the subscription as the provider reported it.
    const alone = (await api('GET', `/api/namespaces/${me.tenant}`)).body.billing;
    expect(alone.subscription).to.deep.equal({
      id: sub.body.id,
      status: 'active',
      current_period_end: sub.body.end_at,
    });
    const listed = (await api('GET', '/api/namespaces')).body as { tenant_id: string; billing: unknown }[];
    expect(listed.find((n) => n.tenant_id === me.tenant)?.billing).to.deep.equal(alone);
    expect((await api('GET', `/api/namespaces/${me.tenant}`)).body.max_devices).to.equal(-1);

    // The only card now pays the subscription: removing it is refused with a message and a code, not a field list.
    const [only] = (await api('GET', '/api/billing/customer')).body.payment_methods as { id: string }[];
    const refused = await api('POST', '/api/billing/paymentmethod/detach', { id: only?.id });
    expect(refused.status).to.equal(400);
    expect(refused.body).to.deep.equal({
      message: 'this card pays the running subscription; add another card before removing it',
      code: 'card_in_use',
    });
    expect((await api('GET', '/api/billing/customer')).body.payment_methods).to.have.length(1);
  });

  it('then accepts a fourth and fifth device and reports each to Stripe as the quantity', async () => {
    const id = (await api('GET', '/api/billing/subscription')).body.id;
    expect((await api('PATCH', `/api/devices/${devices[3]?.uid}/accept`)).status).to.equal(200);
    expect(await quantityAtStripe(id)).to.equal(4);
    expect((await api('PATCH', `/api/devices/${devices[4]?.uid}/accept`)).status).to.equal(200);
    expect(await quantityAtStripe(id)).to.equal(5);
    expect((await api('POST', '/api/billing/evaluate')).body).to.deep.equal({
      can_accept: true,
      can_connect: true,
    });
    expect((await api('POST', '/api/billing/report?action=device_accept')).status).to.equal(200);
    expect((await api('POST', '/api/billing/report?action=bogus')).status).to.equal(400);
    expect((await api('POST', '/api/billing/report')).status).to.equal(400);
  });

  it("applies Stripe's signed events once, in order, and refuses deliveries whose signature does not verify", async () => {
    const answers = await stripe.deliver();
    expect(answers.length).to.be.greaterThan(3);
    expect(answers.every((a) => a.status === 200)).to.equal(true);
    const sub = (await api('GET', '/api/billing/subscription')).body;
    expect(sub.invoices.map((i: { status: string }) => i.status)).to.deep.equal(['paid']);

    // An invoice event for a renewal that fails: open, then the subscription past due (still served).
    const invoice = stripe.invoice(sub.invoices[0].id) as Stripe.Invoice;
    const renewal = {
      ...invoice,
      id: 'in_renewal0001',
      status: 'open' as const,
      amount_due: 2500,
      created: invoice.created + 60,
    };
    stripe.event('invoice.payment_failed', renewal);
    stripe.setSubscriptionStatus(sub.id, 'past_due');
    expect((await stripe.deliver()).map((a) => a.status)).to.deep.equal([200, 200]);
    const pastDue = (await api('GET', '/api/billing/subscription')).body;
    expect(pastDue).to.include({ status: 'past_due', active: true });
    expect(pastDue.invoices[0]).to.deep.equal({
      id: 'in_renewal0001',
      status: 'open',
      currency: 'usd',
      amount: 2500,
    });

    // A delivery repeated by Stripe changes nothing; an older state arriving late does not overwrite a newer one.
    const voided = stripe.event('invoice.voided', { ...renewal, status: 'void' });
    const payload = JSON.stringify(voided);
    stripe.pending.length = 0;
    const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: stripe.webhookSecret });
    expect((await stripe.post(payload, header)).status).to.equal(200);
    expect((await stripe.post(payload, header)).status).to.equal(200);
    expect((await api('GET', '/api/billing/subscription')).body.invoices[0].status).to.equal('voided');
    const stale = stripe.event('invoice.paid', { ...renewal, status: 'paid' });
    (stale as { created: number }).created -= 3600;
    await stripe.deliver();
    expect((await api('GET', '/api/billing/subscription')).body.invoices[0].status).to.equal('voided');
    // A newer state, then the earlier event delivered once more (same id, same second): applied once, not again.
    const newer = stripe.event('invoice.marked_uncollectible', { ...renewal, status: 'uncollectible' });
    (newer as { created: number }).created = voided.created;
    await stripe.deliver();
    expect((await stripe.post(payload, header)).status).to.equal(200);
    expect((await api('GET', '/api/billing/subscription')).body.invoices[0].status).to.equal('uncollectible');

    // Forged, altered, unsigned or signed with another secret: 400, and nothing changes.
    const forged = JSON.stringify({
      ...voided,
      id: 'evt_forged',
      type: 'customer.subscription.deleted',
      data: { object: { ...stripe.subscription(sub.id), status: 'canceled' } },
    });
    const refusals = [
      await stripe.post(forged, undefined),
      await stripe.post(forged, header),
      await stripe.post(
        forged,
        Stripe.webhooks.generateTestHeaderString({ payload: forged, secret: 'whsec_other' }),
      ),
      await stripe.post(forged, 't=1,v1=00'),
      await stripe.post(
        forged,
        Stripe.webhooks.generateTestHeaderString({
          payload: forged,
          secret: stripe.webhookSecret,
          timestamp: Math.floor(Date.now() / 1000) - 3600,
        }),
      ),
    ];
    expect(refusals.map((r) => r.status)).to.deep.equal([400, 400, 400, 400, 400]);
    expect((await api('GET', '/api/billing/subscription')).body).to.include({
      status: 'past_due',
      active: true,
    });
    const notJson = await server.api('POST', '/api/billing/webhook', {
      raw: 'x=1',
      headers: { 'content-type': 'text/plain' },
    });
    expect(notJson.status).to.equal(400);
  });

  it('applies an event whose first delivery failed when Stripe delivers it again', async () => {
    const db = server.kernel.container.cradle.db;
    const sub = (await api('GET', '/api/billing/subscription')).body;
    const invoice = stripe.invoice(sub.invoices.at(-1).id) as Stripe.Invoice;
    // The store fails while this invoice is written (a real failure inside PostgreSQL, as an outage would be).
    await db.raw(`create or replace function billing_test_refuse() returns trigger language plpgsql as $$
      begin raise exception 'refused for the test'; end $$`);
    await db.raw(`create trigger billing_test_refuse before insert on billing_invoices for each row
      when (new.id = 'in_retried0001') execute function billing_test_refuse()`);
    const event = stripe.event('invoice.created', {
      ...invoice,
      id: 'in_retried0001',
      status: 'draft',
      created: invoice.created + 120,
    });
    stripe.pending.length = 0;
    const payload = JSON.stringify(event);
    const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: stripe.webhookSecret });
    try {
      // Not a 2xx: Stripe delivers it again later.
      expect((await stripe.post(payload, header)).status).to.be.at.least(500);
    } finally {
      await db.raw('drop trigger billing_test_refuse on billing_invoices');
      await db.raw('drop function billing_test_refuse()');
    }
    expect((await stripe.post(payload, header)).status).to.equal(200);
    const ids = (await api('GET', '/api/billing/subscription')).body.invoices.map(
      (i: { id: string }) => i.id,
    );
    expect(ids).to.include('in_retried0001');
  });

  it('when the subscription lapses, keeps only the chosen devices reachable through the gateway', async () => {
    const sub = (await api('GET', '/api/billing/subscription')).body;
    stripe.setSubscriptionStatus(sub.id, 'canceled');
    expect((await stripe.deliver()).map((a) => a.status)).to.deep.equal([200]);
    expect((await api('GET', '/api/billing/subscription')).body).to.include({
      status: 'canceled',
      active: false,
    });
    expect((await api('POST', '/api/billing/evaluate')).body).to.deep.equal({
      can_accept: false,
      can_connect: false,
    });
    expect((await api('GET', `/api/namespaces/${me.tenant}`)).body.max_devices).to.equal(3);
    const sixth = await register(6);
    expect((await api('PATCH', `/api/devices/${sixth.uid}/accept`)).status).to.equal(402);

    const mostUsed = await api('GET', '/api/billing/devices-most-used');
    expect(mostUsed.status).to.equal(200);
    expect(mostUsed.body).to.have.length(3);
    expect(mostUsed.body[0]).to.have.keys(['uid', 'name', 'sessions', 'last_seen']);

    const [a, b, c, d] = devices;
    const kept = [a, c, d].map((x) => x?.uid as string);
    for (const choices of [
      [...kept, b?.uid],
      [a?.uid, a?.uid],
      [sixth.uid],
      ['f'.repeat(64)],
      ['not-a-uid'],
    ]) {
      expect(
        (await api('POST', '/api/billing/device-choice', { choices })).status,
        JSON.stringify(choices),
      ).to.equal(400);
    }
    const chosen = await api('POST', '/api/billing/device-choice', { choices: kept });
    expect(chosen.status).to.equal(200);
    expect(chosen.body).to.deep.equal({ choices: kept });

    // Through the SSH gateway with the real OpenSSH client, signed in with a key of the namespace (so told why):
    // an unchosen device is refused with the reason; a chosen one passes the billing rule (and meets the next: no
    // agent is connected here).
    const keyDir = mkdtempSync(path.join(tmpdir(), 'gatehouse-billing-'));
    const keyFile = path.join(keyDir, 'id_ed25519');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', keyFile]);
    const key = await api('POST', '/api/sshkeys/public-keys', {
      data: Buffer.from(readFileSync(`${keyFile}.pub`, 'utf8')).toString('base64'),
      filter: { hostname: '.*' },
      name: 'billing-key',
      username: '.*',
    });
    expect(key.status, JSON.stringify(key.body)).to.equal(200);
    const ssh = (device: string) =>
      new Promise<{ status: number | null; stderr: string }>((resolve) => {
        const child = spawn('ssh', [
          ...clientOptions({ connectTimeout: 10 }),
          ...keyOptions(keyFile),
          '-p',
          String(server.sshPort),
          `root@ada.${device}@127.0.0.1`,
          'true',
        ]);
        let stderr = '';
        child.stderr.on('data', (c: Buffer) => {
          stderr += c.toString();
        });
        const timer = setTimeout(() => child.kill(), 20_000);
        child.on('close', (status) => {
          clearTimeout(timer);
          resolve({ status, stderr });
        });
      });
    const refused = await ssh(b?.name as string);
    expect(refused.status).to.equal(255);
    expect(refused.stderr).to.contain('the subscription of this namespace has ended');
    const allowed = await ssh(a?.name as string);
    expect(allowed.stderr).to.not.contain('subscription');
    expect(allowed.stderr).to.contain(`device ada.${a?.name} is offline`);
    rmSync(keyDir, { recursive: true, force: true });

    // HTTP tunnels follow the same rule, for requests and upgrades: the unchosen device's tunnel is refused with
    // 402 and the reason; the chosen one's passes the rule (and meets the next: no agent is connected here).
    const tunnelTo = async (uid: string) => {
      const res = await api('POST', `/api/devices/${uid}/tunnels`, {
        host: '127.0.0.1',
        port: 8080,
        ttl: -1,
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body.address as string;
    };
    const [unchosen, chosenTunnel] = [await tunnelTo(b?.uid as string), await tunnelTo(a?.uid as string)];
    const refusedTunnel = await viaTunnel(server, unchosen);
    expect(refusedTunnel.status).to.equal(402);
    expect(refusedTunnel.body).to.contain('the subscription of this namespace has ended');
    expect((await viaTunnel(server, unchosen, true)).status).to.equal(402);
    const passed = await viaTunnel(server, chosenTunnel);
    expect(passed.status).to.equal(502);
    expect(passed.body).to.contain('The device is offline');
    expect((await viaTunnel(server, chosenTunnel, true)).status).to.equal(502);
  });

  it('answers 424, never 500, while Stripe is away, and keeps a namespace whose subscription it cannot end', async () => {
    // A second namespace with a running subscription, to delete.
    const ns = await api('POST', '/api/namespaces', { name: 'second' });
    expect(ns.status, JSON.stringify(ns.body)).to.equal(200);
    const second = (await api('GET', `/api/auth/token/${ns.body.tenant_id}`)).body as LoginAnswer;
    expect(
      (await api('POST', '/api/billing/paymentmethod/attach', { id: 'pm_card_amex' }, second.token)).status,
    ).to.equal(200);
    const sub = await api('POST', '/api/billing/subscription', undefined, second.token);
    expect(sub.body.status).to.equal('active');

    for (const outage of ['refuse', 'error'] as const) {
      stripe.outage = outage;
      for (const [method, path, body] of [
        ['GET', '/api/billing/customer'],
        ['POST', '/api/billing/customer'],
        ['POST', '/api/billing/paymentmethod/attach', { id: 'pm_card_visa' }],
        ['POST', '/api/billing/paymentmethod/default', { id: 'pm_card_visa' }],
        ['POST', '/api/billing/report?action=namespace_delete'],
      ] as [string, string, unknown?][]) {
        const res = await api(method, path, body, second.token);
        expect(res.status, `${outage} ${method} ${path}`).to.equal(424);
        expect(res.body).to.deep.equal({
          message: 'the payment provider did not answer; try again in a moment',
          code: 'provider_unavailable',
        });
      }
      const deletion = await api('DELETE', `/api/namespaces/${ns.body.tenant_id}`, undefined, second.token);
      expect(deletion.status, outage).to.equal(424);
      expect(
        (await api('GET', `/api/namespaces/${ns.body.tenant_id}`, undefined, second.token)).status,
      ).to.equal(200);
      // What is kept here still answers.
      expect((await api('GET', '/api/billing/subscription', undefined, second.token)).status).to.equal(200);
    }
    stripe.outage = 'none';
    const deletion = await api('DELETE', `/api/namespaces/${ns.body.tenant_id}`, undefined, second.token);
    expect(deletion.status).to.equal(200);
    expect(stripe.subscription(sub.body.id).status).to.equal('canceled');
  });
});

describe('billing: not in the community and enterprise editions', function () {
  this.timeout(60_000);
  for (const edition of ['community', 'enterprise']) {
    it(`${edition}: every billing call is 404 (not registered)`, async () => {
      const server = await startServer({ edition, ssh: false });
      try {
        const me = await server.setup();
        for (const [method, path] of [
          ['GET', '/api/billing/customer'],
          ['POST', '/api/billing/customer'],
          ['GET', '/api/billing/subscription'],
          ['POST', '/api/billing/subscription'],
          ['POST', '/api/billing/paymentmethod/attach'],
          ['POST', '/api/billing/paymentmethod/detach'],
          ['POST', '/api/billing/paymentmethod/default'],
          ['POST', '/api/billing/device-choice'],
          ['GET', '/api/billing/devices-most-used'],
          ['POST', '/api/billing/report?action=device_accept'],
          ['POST', '/api/billing/evaluate'],
          ['POST', '/api/billing/webhook'],
        ] as const) {
          const res = await server.api(method, path, {
            token: me.token,
            ...(method === 'POST' ? { body: { id: 'pm_card_visa', choices: [] } } : {}),
          });
          expect(res.status, `${method} ${path}`).to.equal(404);
        }
        const doc = await server.api('GET', `/openapi/${edition}.json`);
        expect(JSON.stringify(doc.body)).to.not.contain('/api/billing');
      } finally {
        await server.stop();
      }
    });
  }
});
