import { expect } from 'chai';
import { type LoginAnswer, startServer, type TestServer } from '../../support/server';
import { startSmtp, type TestSmtp } from '../../support/smtp';
import { type FakeStripe, startFakeStripe } from '../../support/stripe';
import { signUp } from '../cloud/mail';

/**
 * `DELETE /api/user` settles billing first: the running subscription of every namespace the account
 * alone owns ends at the provider before anything goes, and a provider that does not answer keeps the account and
 * its namespaces with 424.
 */
describe('billing (cloud): deleting an account ends the subscriptions of the namespaces it owns', function () {
  this.timeout(60_000);
  let stripe: FakeStripe;
  let smtp: TestSmtp;
  let server: TestServer;

  before(async () => {
    stripe = await startFakeStripe();
    smtp = await startSmtp();
    server = await startServer({
      edition: 'cloud',
      ssh: false,
      overrides: {
        smtp: { url: smtp.url, from: 'Gatehouse <gh@test>' },
        publicUrl: 'https://cloud.test',
        limits: {
          registrationsPerMinute: 1000,
          pendingPerSource: 1000,
          pendingPerBlock: 1000,
          maxNamespaces: -1,
        },
        billing: {
          stripeSecretKey: stripe.secretKey,
          stripeWebhookSecret: stripe.webhookSecret,
          stripePlan: stripe.plan,
          stripeApiBase: stripe.url,
        },
      },
    });
    stripe.webhookUrl = `${server.url}/api/billing/webhook`;
    await server.setup();
  });
  after(async () => {
    await server?.stop();
    await smtp?.stop();
    await stripe?.stop();
  });

  /** A namespace of `owner` and the owner's token in it. */
  const namespace = async (owner: LoginAnswer, name: string) => {
    const ns = await server.api('POST', '/api/namespaces', { token: owner.token, body: { name } });
    expect(ns.status, JSON.stringify(ns.body)).to.equal(200);
    const token = await server.api('GET', `/api/auth/token/${ns.body.tenant_id}`, { token: owner.token });
    return { tenant: ns.body.tenant_id as string, token: (token.body as LoginAnswer).token };
  };
  const subscribe = async (token: string, card: string) => {
    const attached = await server.api('POST', '/api/billing/paymentmethod/attach', {
      token,
      body: { id: card },
    });
    expect(attached.status, JSON.stringify(attached.body)).to.equal(200);
    const sub = await server.api('POST', '/api/billing/subscription', { token });
    expect(sub.body.status).to.equal('active');
    return sub.body.id as string;
  };

  it('answers 424 and keeps everything while Stripe is away, then cancels every owned subscription and deletes', async () => {
    const owner = await signUp(server, smtp, 'payer');
    const paid = await namespace(owner, 'payer-paid');
    const alsoPaid = await namespace(owner, 'payer-also');
    const free = await namespace(owner, 'payer-free');
    const first = await subscribe(paid.token, 'pm_card_visa');
    const second = await subscribe(alsoPaid.token, 'pm_card_amex');

    // Another account's subscription is not the leaving account's to end.
    const neighbour = await signUp(server, smtp, 'neighbour');
    const theirs = await namespace(neighbour, 'neighbour-ns');
    const theirSub = await subscribe(theirs.token, 'pm_card_visa');
    const db = server.kernel.container.cradle.db;
    await db('namespace_members').insert({
      tenant_id: theirs.tenant,
      user_id: owner.id,
      role: 'administrator',
    });

    // What goes, as the caller confirms it: the namespaces it owns, and its password.
    const confirmed = {
      namespaces: [paid.tenant, alsoPaid.tenant, free.tenant],
      password: 'sign-up_Pass1',
    };
    for (const outage of ['refuse', 'error'] as const) {
      stripe.outage = outage;
      const refused = await server.api('DELETE', '/api/user', { token: owner.token, body: confirmed });
      expect(refused.status, outage).to.equal(424);
      expect(refused.body).to.deep.equal({
        message: 'the payment provider did not answer; try again in a moment',
        code: 'provider_unavailable',
      });
      stripe.outage = 'none';
      expect(await db('users').where({ id: owner.id }).first()).to.not.equal(undefined);
      for (const ns of [paid, alsoPaid, free]) {
        expect(await db('namespaces').where({ tenant_id: ns.tenant }).first(), outage).to.not.equal(
          undefined,
        );
      }
      const still = await server.api('GET', '/api/billing/subscription', { token: paid.token });
      expect(still.body.status).to.equal('active');
      expect(stripe.subscription(first).status).to.equal('active');
    }

    const callsBefore = stripe.calls.length;
    const deleted = await server.api('DELETE', '/api/user', { token: owner.token, body: confirmed });
    expect(deleted.status, JSON.stringify(deleted.body)).to.equal(204);
    expect(stripe.subscription(first).status).to.equal('canceled');
    expect(stripe.subscription(second).status).to.equal('canceled');
    // Each subscription was cancelled once: the namespaces' own hook found it ended already.
    const cancels = stripe.calls.slice(callsBefore).filter((c) => c.startsWith('DELETE /v1/subscriptions/'));
    expect(cancels.sort()).to.deep.equal(
      [`DELETE /v1/subscriptions/${first}`, `DELETE /v1/subscriptions/${second}`].sort(),
    );
    expect(stripe.subscription(theirSub).status).to.equal('active');
    expect(await db('users').where({ id: owner.id }).first()).to.equal(undefined);
    for (const ns of [paid, alsoPaid, free]) {
      expect(await db('namespaces').where({ tenant_id: ns.tenant }).first()).to.equal(undefined);
    }
    expect(await db('namespaces').where({ tenant_id: theirs.tenant }).first()).to.not.equal(undefined);
    const kept = await server.api('GET', '/api/billing/subscription', { token: theirs.token });
    expect(kept.body.status).to.equal('active');
  });
});
