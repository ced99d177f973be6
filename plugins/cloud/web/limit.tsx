import { Link } from '@gatehouse/console';

/** The devices a namespace has for free; beyond them, accepting needs a subscription. */
export const FREE_DEVICES = 3;

/** Said where a device cannot be accepted (the device limit, or a 402): a subscription lifts the limit. */
export function SubscribeForMoreDevices() {
  return (
    <p style={{ margin: '6px 0 0' }}>
      {`Beyond ${FREE_DEVICES} devices, accepting needs an active subscription. `}
      <Link to="/billing">Open Billing to subscribe</Link>
    </p>
  );
}
