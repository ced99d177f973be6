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
  TextField,
  useAction,
  useApi,
  useResource,
  useToast,
  useUser,
} from '@gatehouse/console';
import { type FormEvent, useEffect, useState } from 'react';
import type {
  CustomerView as Customer,
  InvoiceView as Invoice,
  MostUsedDevice as MostUsed,
  PaymentMethodView as PaymentMethod,
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

/** The Billing page: the namespace's subscription and invoices, its cards, and the devices kept if it lapses. */
export function BillingPage() {
  const api = useApi();
  const user = useUser();
  const subscription = useResource(
    () => api.call<Subscription>(calls.getSubscription, { context: 'Could not load the subscription' }),
    [api, user.tenant],
  );
  const owner = user.role === 'owner';
  return (
    <>
      <PageHeader
        title="Billing"
        description={`A namespace has ${FREE_DEVICES} devices for free; with a subscription it may accept more, billed per accepted device each month.`}
      />
      {subscription.error ? (
        <Card>
          <ErrorState message={subscription.error} onRetry={subscription.reload} />
        </Card>
      ) : !subscription.data ? (
        <Loading />
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
  const toast = useToast();
  const action = useAction();
  const subscribe = async () => {
    const ok = await action.run(() => api.call(calls.createSubscription, { context: 'Could not subscribe' }));
    if (ok) {
      toast('Subscribed: this namespace can now accept more devices');
      onChange();
    }
  };
  return (
    <Card
      title="Subscription"
      actions={
        owner && !subscription.active ? (
          <Button variant="primary" onClick={subscribe} busy={action.pending}>
            Subscribe
          </Button>
        ) : null
      }
    >
      <div className="card-body">
        {action.error ? <Alert>{action.error}</Alert> : null}
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
        </dl>
      </div>
    </Card>
  );
}

function Cards({ subscription, onChange }: { subscription: Subscription; onChange: () => void }) {
  const api = useApi();
  const user = useUser();
  const toast = useToast();
  const action = useAction();
  const [method, setMethod] = useState('');
  const [removing, setRemoving] = useState<PaymentMethod | null>(null);
  const customer = useResource(async () => {
    try {
      return await api.call<Customer>(calls.getCustomer, { context: 'Could not load the cards' });
    } catch (err) {
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
  const attach = async (e: FormEvent) => {
    e.preventDefault();
    if (await run('attachPaymentMethod', method.trim(), 'Could not add the card', 'Card added'))
      setMethod('');
  };
  const cards = customer.data?.payment_methods ?? [];

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
          <form className="row" style={{ alignItems: 'flex-end', gap: 8 }} onSubmit={attach}>
            <TextField
              label="Add a card"
              name="payment-method"
              value={method}
              onChange={(e) => setMethod(e.target.value)}
              placeholder="pm_..."
              list="stripe-test-cards"
              hint="The id of a card saved with Stripe (a payment method, pm_...). With a Stripe test key, Stripe's test cards work: pm_card_visa, pm_card_mastercard."
              required
              autoComplete="off"
            />
            <datalist id="stripe-test-cards">
              <option value="pm_card_visa" />
              <option value="pm_card_mastercard" />
              <option value="pm_card_amex" />
            </datalist>
            <Button type="submit" variant="primary" busy={action.pending} disabled={!method.trim()}>
              Add card
            </Button>
          </form>
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
