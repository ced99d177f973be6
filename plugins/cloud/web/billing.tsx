import {
  Alert,
  ApiError,
  Button,
  Card,
  ConfirmDialog,
  Empty,
  ErrorState,
  formatDate,
  icons,
  Link,
  Loading,
  PageHeader,
  ScrollFrame,
  useAction,
  useApi,
  useNavigate,
  useResource,
  useSearchParam,
  useToast,
  useUser,
} from '@gatehouse/console';
import { useEffect, useRef, useState } from 'react';
import type {
  CustomerView as Customer,
  InvoiceView as Invoice,
  MostUsedDevice as MostUsed,
  PaymentMethodView as PaymentMethod,
  PriceView as Price,
  SubscriptionView as Subscription,
} from '../billing/schemas';
import { calls } from './api';
import { FREE_DEVICES } from './limit';

/** What the device choice needs of a device of `GET /api/devices` (the community plugin's entity). */
interface DeviceRow {
  uid: string;
  name: string;
  online: boolean;
}

const statusWords: Record<string, string> = {
  inactive: 'No subscription',
  active: 'Active',
  trialing: 'Trial',
  incomplete: 'Payment incomplete',
  incomplete_expired: 'Payment expired',
  past_due: 'Payment overdue',
  canceled: 'Canceled',
  unpaid: 'Unpaid',
  paused: 'Paused',
  to_cancel_at_end_of_period: 'Ends at the end of the period',
};

const invoiceWords: Record<Invoice['status'], string> = {
  draft: 'Draft',
  open: 'Open',
  paid: 'Paid',
  uncollectible: 'Uncollectible',
  voided: 'Voided',
};

export function money(cents: number, currency: string): string {
  return new Intl.NumberFormat(undefined, { style: 'currency', currency: currency.toUpperCase() }).format(
    cents / 100,
  );
}

/** "month", "3 months": a recurring price's interval. */
function every(price: Price): string {
  return price.interval_count === 1 ? price.interval : `${price.interval_count} ${price.interval}s`;
}

/** "3 devices", "1 device". */
function devicesText(n: number): string {
  return `${n} ${n === 1 ? 'device' : 'devices'}`;
}

/** The server answers 424 `billing_not_configured` on every billing call when it has no Stripe account. */
const NOT_SET_UP = 'billing_not_configured';

/** Whether a call failed because Stripe did not answer (424 `provider_unavailable`), not because of the request. */
function providerAway(err: unknown): boolean {
  return err instanceof ApiError && err.status === 424 && err.code === 'provider_unavailable';
}

/** What the page says while Stripe does not answer, in place of an error. */
function ProviderAway({ what, onRetry }: { what: string; onRetry: () => void }) {
  return (
    <Alert kind="warn" title="Stripe, the payment provider, is not answering">
      <p>{`${what} cannot be shown right now. Nothing was changed; try again in a moment.`}</p>
      <Button size="sm" onClick={onRetry}>
        Try again
      </Button>
    </Alert>
  );
}

/** The Billing page: the namespace's subscription and invoices, its cards, and the devices kept if it lapses. */
export function BillingPage() {
  const api = useApi();
  const user = useUser();
  const subscription = useResource(async () => {
    try {
      return await api.call<Subscription>(calls.getSubscription, {
        context: 'Could not load the subscription',
      });
    } catch (err) {
      if (err instanceof ApiError && err.status === 424 && err.code === NOT_SET_UP) return null;
      throw err;
    }
  }, [api, user.tenant]);
  const owner = user.role === 'owner';
  return (
    <>
      <PageHeader
        title="Billing"
        description={`A namespace has ${FREE_DEVICES} devices for free; with a subscription it may accept more, billed per accepted device.`}
      />
      {subscription.error ? (
        <Card>
          <ErrorState message={subscription.error} onRetry={subscription.reload} />
        </Card>
      ) : subscription.data === undefined ? (
        <Loading />
      ) : subscription.data === null ? (
        <Alert kind="info" title="Billing is not set up on this server">
          {`This server has no payment provider configured, so cards cannot be added and subscriptions cannot be made. Each namespace can accept up to ${FREE_DEVICES} devices. The server's administrator sets up billing with a Stripe account.`}
        </Alert>
      ) : (
        <div className="stack">
          {owner ? null : (
            <Alert kind="info" title="Managed by the owner">
              Only the owner of this namespace can add cards, subscribe and choose the devices kept.
            </Alert>
          )}
          {owner ? <Cards subscription={subscription.data} onChange={subscription.reload} /> : null}
          <SubscriptionCard subscription={subscription.data} owner={owner} onChange={subscription.reload} />
          <Invoices invoices={subscription.data.invoices} />
          {owner ? <DeviceChoice subscription={subscription.data} /> : null}
        </div>
      )}
    </>
  );
}

function SubscriptionCard({
  subscription,
  owner,
  onChange,
}: {
  subscription: Subscription;
  owner: boolean;
  onChange: () => void;
}) {
  const api = useApi();
  const user = useUser();
  const toast = useToast();
  const [confirming, setConfirming] = useState<Price | null>(null);
  const offer = owner && !subscription.active;
  const price = useResource(async () => {
    if (!offer) return null;
    try {
      return await api.call<Price>(calls.getPrice, { context: 'Could not load the price' });
    } catch (err) {
      if (providerAway(err)) return 'away' as const;
      throw err;
    }
  }, [api, user.tenant, offer, subscription]);
  const known = price.data && price.data !== 'away' ? price.data : null;
  return (
    <Card
      title="Subscription"
      actions={
        offer ? (
          <Button variant="primary" onClick={() => setConfirming(known)} disabled={!known}>
            Subscribe
          </Button>
        ) : null
      }
    >
      <ConfirmDialog
        subject={confirming}
        title={(p) => `Subscribe for ${money(p.amount, p.currency)} per ${every(p)}?`}
        description={(p) =>
          `${devicesText(p.devices)} accepted now, at ${money(p.unit_amount, p.currency)} per device per ${every(p)}, charged to the default card. Each device accepted later adds ${money(p.unit_amount, p.currency)} per ${every(p)}.`
        }
        confirmLabel="Subscribe"
        onConfirm={() => api.call(calls.createSubscription, { context: 'Could not subscribe' })}
        onDone={() => {
          toast('Subscribed: this namespace can now accept more devices');
          onChange();
        }}
        onClose={() => setConfirming(null)}
      />
      <div className="card-body">
        <dl className="props">
          <dt>Status</dt>
          <dd>
            <span className={`badge ${subscription.active ? 'badge-ok' : 'badge-warn'}`}>
              {statusWords[subscription.status] ?? subscription.status}
            </span>
          </dd>
          {subscription.end_at > 0 ? (
            <>
              <dt>{subscription.active ? 'Current period ends' : 'Ended'}</dt>
              <dd>{formatDate(new Date(subscription.end_at * 1000).toISOString())}</dd>
            </>
          ) : null}
          <dt>Devices</dt>
          <dd>
            {subscription.active
              ? 'No limit: each accepted device is billed.'
              : `Up to ${FREE_DEVICES} accepted devices. Subscribe to accept more.`}
          </dd>
          {offer && price.data !== 'away' ? (
            <>
              <dt>Price</dt>
              <dd>
                {price.error ? (
                  <ErrorState message={price.error} onRetry={price.reload} />
                ) : !known ? (
                  'Loading the price…'
                ) : (
                  `${money(known.unit_amount, known.currency)} per device per ${every(known)}`
                )}
              </dd>
              {known ? (
                <>
                  <dt>Charged now</dt>
                  <dd>
                    {`${money(known.amount, known.currency)} per ${every(known)} for ${devicesText(known.devices)} accepted`}
                  </dd>
                </>
              ) : null}
            </>
          ) : null}
        </dl>
        {offer && price.data === 'away' ? <ProviderAway what="The price" onRetry={price.reload} /> : null}
      </div>
    </Card>
  );
}

function Cards({ subscription, onChange }: { subscription: Subscription; onChange: () => void }) {
  const api = useApi();
  const user = useUser();
  const toast = useToast();
  const action = useAction();
  const navigate = useNavigate();
  const returned = useSearchParam('checkout_session');
  const canceled = useSearchParam('checkout') === 'canceled';
  const completing = useRef<string | null>(null);
  const [removing, setRemoving] = useState<PaymentMethod | null>(null);
  const customer = useResource(async () => {
    try {
      return await api.call<Customer>(calls.getCustomer, { context: 'Could not load the cards' });
    } catch (err) {
      if (providerAway(err)) return 'away' as const;
      // No customer yet: the first card makes one.
      if (err instanceof ApiError && err.status === 404) return null;
      throw err;
    }
  }, [api, user.tenant, subscription]);

  const run = async (call: keyof typeof calls, id: string, context: string, done: string) => {
    const ok = await action.run(() => api.call(calls[call], { body: { id }, context }));
    if (ok) {
      toast(done);
      customer.reload();
      onChange();
    }
    return ok;
  };
  // Back from Stripe's card page: the card saved there is added once, and the address loses the session id.
  useEffect(() => {
    if (!returned || completing.current === returned) return;
    completing.current = returned;
    void action
      .run(() =>
        api.call(calls.completeCheckout, {
          body: { session_id: returned },
          context: 'Could not add the card',
        }),
      )
      .then((ok) => {
        navigate('/billing', { replace: true });
        if (ok) {
          toast('Card added');
          customer.reload();
          onChange();
        }
      });
  }, [returned, action, api, navigate, toast, customer.reload, onChange]);
  const enterCard = () =>
    action.run(async () => {
      const session = await api.call<{ url: string }>(calls.startCheckout, {
        context: 'Could not open the card entry',
      });
      window.location.assign(session.url);
    });
  const cards = customer.data && customer.data !== 'away' ? customer.data.payment_methods : [];

  const describe = (c: PaymentMethod) => `${c.brand} card ending ${c.number.slice(-4)}`;
  return (
    <Card title="Cards">
      <ConfirmDialog
        subject={removing}
        title={(c) => `Remove the ${describe(c)}?`}
        description="This namespace's invoices will no longer be charged to it."
        confirmLabel="Remove"
        onConfirm={(c) =>
          api.call(calls.detachPaymentMethod, { body: { id: c.id }, context: 'Could not remove the card' })
        }
        onDone={() => {
          toast('Card removed');
          customer.reload();
          onChange();
        }}
        onClose={() => setRemoving(null)}
      />
      {customer.error ? (
        <ErrorState message={customer.error} onRetry={customer.reload} />
      ) : customer.data === undefined ? (
        <Loading />
      ) : customer.data === 'away' ? (
        <div className="card-body">
          <ProviderAway what="The cards" onRetry={customer.reload} />
        </div>
      ) : (
        <div className="card-body stack">
          {action.error ? <Alert>{action.error}</Alert> : null}
          {cards.length === 0 ? (
            <Empty title="No card yet" icon={icons.card}>
              A subscription is charged to the default card.
            </Empty>
          ) : (
            <ScrollFrame label="Cards">
              <table className="table" aria-label="Cards">
                <thead>
                  <tr>
                    <th>Card</th>
                    <th>Expires</th>
                    <th>
                      <span className="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {cards.map((c) => (
                    <tr key={c.id}>
                      <td className="nowrap">
                        <span style={{ textTransform: 'capitalize' }}>{c.brand}</span>{' '}
                        <span className="mono">{c.number}</span>{' '}
                        {c.default ? <span className="badge badge-ok">Default</span> : null}
                      </td>
                      <td>{`${String(c.exp_month).padStart(2, '0')}/${c.exp_year}`}</td>
                      <td>
                        <div className="row" style={{ justifyContent: 'flex-end', gap: 6 }}>
                          {c.default ? null : (
                            <Button
                              size="sm"
                              onClick={() =>
                                run(
                                  'defaultPaymentMethod',
                                  c.id,
                                  'Could not change the default card',
                                  'Default card changed',
                                )
                              }
                              aria-label={`Make the ${c.brand} card ending ${c.number.slice(-4)} the default`}
                            >
                              Make default
                            </Button>
                          )}
                          <Button
                            size="sm"
                            variant="danger"
                            onClick={() => setRemoving(c)}
                            aria-label={`Remove the ${c.brand} card ending ${c.number.slice(-4)}`}
                          >
                            Remove
                          </Button>
                        </div>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </ScrollFrame>
          )}
          {canceled && !action.error ? (
            <Alert kind="info" title="No card added">
              The card entry was canceled.
            </Alert>
          ) : null}
          <div className="row" style={{ alignItems: 'center', gap: 8, flexWrap: 'wrap' }}>
            <Button variant="primary" onClick={enterCard} busy={action.pending}>
              Add a card
            </Button>
            <span className="muted">
              The card is entered on Stripe's secure page, then you come back here.
            </span>
          </div>
        </div>
      )}
    </Card>
  );
}

function Invoices({ invoices }: { invoices: Invoice[] }) {
  return (
    <Card title="Invoices">
      {invoices.length === 0 ? (
        <Empty title="No invoices yet" icon={icons.card}>
          Invoices appear here once the first period is billed.
        </Empty>
      ) : (
        <ScrollFrame label="Invoices">
          <table className="table" aria-label="Invoices">
            <thead>
              <tr>
                <th>Invoice</th>
                <th>Status</th>
                <th>Amount</th>
              </tr>
            </thead>
            <tbody>
              {invoices.map((i) => (
                <tr key={i.id}>
                  <td className="mono">{i.id}</td>
                  <td>
                    <span
                      className={`badge ${i.status === 'paid' ? 'badge-ok' : i.status === 'open' ? 'badge-warn' : ''}`}
                    >
                      {invoiceWords[i.status] ?? i.status}
                    </span>
                  </td>
                  <td>{money(i.amount, i.currency)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollFrame>
      )}
    </Card>
  );
}

/** The devices kept reachable if the subscription ends (at most the free number); the most used until chosen. */
function DeviceChoice({ subscription }: { subscription: Subscription }) {
  const api = useApi();
  const user = useUser();
  const toast = useToast();
  const action = useAction();
  const data = useResource(async () => {
    const [devices, mostUsed, evaluation] = await Promise.all([
      api.page<DeviceRow>(calls.acceptedDevices, {
        query: { status: 'accepted', per_page: 100, sort_by: 'name', order_by: 'asc' },
        context: 'Could not load the devices',
      }),
      api.call<MostUsed[]>(calls.devicesMostUsed, { context: 'Could not load the most used devices' }),
      api.call<{ can_accept: boolean; can_connect: boolean }>(calls.evaluateBilling, {
        context: 'Could not evaluate the namespace',
      }),
    ]);
    return { devices: devices.items, mostUsed, evaluation };
  }, [api, user.tenant, subscription]);
  const [chosen, setChosen] = useState<string[] | null>(null);
  useEffect(() => {
    if (data.data && chosen === null) setChosen(data.data.mostUsed.map((d) => d.uid).slice(0, FREE_DEVICES));
  }, [data.data, chosen]);

  if (data.error) return <ErrorState message={data.error} onRetry={data.reload} />;
  if (!data.data || chosen === null) return <Loading />;
  const { devices, evaluation } = data.data;
  if (devices.length <= FREE_DEVICES && evaluation.can_connect) return null;

  const toggle = (uid: string) =>
    setChosen((c) => {
      const list = c ?? [];
      if (list.includes(uid)) return list.filter((x) => x !== uid);
      return list.length >= FREE_DEVICES ? list : [...list, uid];
    });
  const save = async () => {
    const ok = await action.run(() =>
      api.call(calls.chooseDevices, { body: { choices: chosen }, context: 'Could not keep these devices' }),
    );
    if (ok) {
      toast('Devices kept');
      data.reload();
    }
  };
  return (
    <Card
      title="Devices kept without a subscription"
      actions={
        <Button variant="primary" onClick={save} busy={action.pending}>
          Keep these devices
        </Button>
      }
    >
      <div className="card-body stack">
        {evaluation.can_connect ? (
          <p className="muted">
            {`If the subscription ends, only ${FREE_DEVICES} devices stay reachable. Choose them now; until you do, the most used are kept.`}
          </p>
        ) : (
          <Alert kind="warn" title="The subscription has ended">
            {`Only ${FREE_DEVICES} devices stay reachable through the gateway. Choose them below, or subscribe again to reach them all.`}
          </Alert>
        )}
        {action.error ? <Alert>{action.error}</Alert> : null}
        <fieldset className="stack" style={{ border: 0, padding: 0, margin: 0 }}>
          <legend className="sr-only">Devices kept</legend>
          {devices.map((d) => (
            <label key={d.uid} className="row" style={{ gap: 8 }}>
              <input
                type="checkbox"
                checked={chosen.includes(d.uid)}
                disabled={!chosen.includes(d.uid) && chosen.length >= FREE_DEVICES}
                onChange={() => toggle(d.uid)}
              />
              <Link to={`/device/${d.uid}`}>{d.name}</Link>
            </label>
          ))}
        </fieldset>
        <span className="muted">{`${chosen.length} of ${FREE_DEVICES} chosen`}</span>
      </div>
    </Card>
  );
}
