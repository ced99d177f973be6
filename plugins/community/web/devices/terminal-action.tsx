import { type DeviceAction, icons, Link } from '@gatehouse/web/shell';
import { kindOf } from './kind';

/** The community edition's device action: open a web terminal on an accepted, online device. */
export const terminalAction: DeviceAction = {
  id: 'terminal',
  label: 'Open terminal',
  available: (device) => device.status === 'accepted' && device.online,
  component: ({ device }) => (
    <Link className="btn btn-primary" to={`${kindOf(device).detailsPath(device.uid)}/terminal`}>
      {icons.terminal} Open terminal
    </Link>
  ),
};
