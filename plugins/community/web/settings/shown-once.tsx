import { Alert, CopyField, Dialog } from '@gatehouse/console';
import type { ReactNode } from 'react';

/**
 * A secret the server answers only once (an API key, an install key), with its Copy button and what else goes with
 * it (`children`); open while `secret` is set.
 */
export function SecretShownOnce({
  open,
  title,
  label,
  secret,
  why,
  onClose,
  children,
}: {
  open: boolean;
  title: string;
  /** The copy field's label (its button reads "Copy <label>"). */
  label: string;
  secret: string | undefined;
  /** Why it is not shown again. */
  why: string;
  onClose: () => void;
  children?: ReactNode;
}) {
  return (
    <Dialog open={open} title={title} onClose={onClose}>
      <Alert kind="warn" title="Copy the key now">
        {why}
      </Alert>
      {secret ? (
        <div className="stack" style={{ gap: 8 }}>
          <CopyField label={label} value={secret} />
          {children}
        </div>
      ) : (
        <p className="muted">The server did not return the key.</p>
      )}
    </Dialog>
  );
}
