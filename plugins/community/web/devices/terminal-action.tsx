import { type DeviceAction, icons, Link } from '@gatehouse/console';

/** The community edition's device action: open a web terminal on an accepted, online device. */
export const terminalAction: DeviceAction = {
  id: 'terminal',
  label: 'Open terminal',
  available: (device) => device.status === 'accepted' && device.online,
  component: ({ detailsPath }) => (
    <Link className="btn btn-primary" to={`${detailsPath}/terminal`}>
      {icons.terminal} Open terminal
    </Link>
  ),
};
