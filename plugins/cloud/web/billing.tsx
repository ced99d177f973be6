import {
  Card,
  Empty,
  ErrorState,
  formatDate,
  icons,
  Loading,
  PageHeader,
  ScrollFrame,
  useApi,
  useResource,
  useUser,
} from '@gatehouse/web/shell';

interface Subscription {
  id: string;
  active: boolean;
  status: string;
  end_at: number | string;
  invoices?: { id: string; status: string; currency: 'usd' | 'brl'; amount: number }[];
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

export function money(cents: number, currency: string): string {
  return new Intl.NumberFormat(undefined, { style: 'currency', currency: currency.toUpperCase() }).format(
    cents / 100,
  );
}

export function BillingPage() {
  const api = useApi();
  const user = useUser();
  const subscription = useResource(
    () => api.call<Subscription>('getSubscription', { context: 'Could not load the subscription' }),
    [api, user.tenant],
  );
  return (
    <>
      <PageHeader title="Billing" description="The subscription of this namespace." />
      {subscription.error ? (
        <Card>
          <ErrorState message={subscription.error} onRetry={subscription.reload} />
        </Card>
      ) : !subscription.data ? (
        <Loading />
      ) : (
        <div className="stack">
          <Card title="Subscription">
            <div className="card-body">
              <dl className="props">
                <dt>Status</dt>
                <dd>
                  <span className={`badge ${subscription.data.active ? 'badge-ok' : 'badge-warn'}`}>
                    {statusWords[subscription.data.status] ?? subscription.data.status}
                  </span>
                </dd>
                <dt>Current period ends</dt>
                <dd>
                  {formatDate(
                    typeof subscription.data.end_at === 'number'
                      ? new Date(subscription.data.end_at * 1000).toISOString()
                      : subscription.data.end_at,
                  )}
                </dd>
              </dl>
            </div>
          </Card>
          <Card title="Invoices">
            {(subscription.data.invoices ?? []).length === 0 ? (
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
                    {(subscription.data.invoices ?? []).map((i) => (
                      <tr key={i.id}>
                        <td className="mono">{i.id}</td>
                        <td>{i.status}</td>
                        <td>{money(i.amount, i.currency)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </ScrollFrame>
            )}
          </Card>
        </div>
      )}
    </>
  );
}
