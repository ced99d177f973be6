import { ConfirmDialog, formatDate, useApi, useToast } from '@gatehouse/console';
import { calls } from '../api';
import type { Session } from '../types';

/** Asks before closing the session, then closes it on the gateway and the device. */
export function CloseSessionDialog({
  session,
  onClose,
  onClosed,
}: {
  session: Session | null;
  onClose: () => void;
  onClosed: () => void;
}) {
  const api = useApi();
  const toast = useToast();
  return (
    <ConfirmDialog
      subject={session}
      title="Close this session?"
      description={(s) =>
        `The connection of ${s.username} to ${s.device?.name ?? s.device_uid.slice(0, 12)}, started ${formatDate(s.started_at)}, ends at once, with anything running in it.`
      }
      confirmLabel="Close session"
      onConfirm={(s) =>
        api.call(calls.closeSession, {
          params: { uid: s.uid },
          body: { device: s.device_uid },
          context: 'Could not close the session',
        })
      }
      onDone={() => {
        toast('Session closed');
        onClosed();
      }}
      onClose={onClose}
    />
  );
}
