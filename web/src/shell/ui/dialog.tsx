import { type FormEvent, type ReactNode, useEffect, useId, useRef } from 'react';
import { Button } from './controls';
import { Alert } from './feedback';

/**
 * A modal built on the native <dialog>: the browser traps focus, closes on Escape and restores focus,
 * which keeps every dialog keyboard operable without extra code.
 */
export function Dialog({
  open,
  title,
  description,
  onClose,
  onSubmit,
  submitLabel = 'Save',
  submitVariant = 'primary',
  busy,
  error,
  children,
  footer,
}: {
  open: boolean;
  title: string;
  description?: ReactNode;
  onClose: () => void;
  onSubmit?: () => void;
  submitLabel?: string;
  submitVariant?: 'primary' | 'danger';
  busy?: boolean;
  error?: string | null;
  children?: ReactNode;
  footer?: ReactNode;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onSubmit?.();
  };
  return (
    <dialog
      ref={ref}
      className="dialog"
      aria-labelledby={titleId}
      onClose={onClose}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
    >
      {open ? (
        <form onSubmit={submit}>
          <div className="dialog-head">
            <h2 id={titleId}>{title}</h2>
            {description ? (
              <p className="muted" style={{ marginTop: 6 }}>
                {description}
              </p>
            ) : null}
          </div>
          <div className="dialog-body">
            {children}
            {error ? <Alert>{error}</Alert> : null}
          </div>
          <div className="dialog-foot">
            {footer ?? (
              <>
                <Button onClick={onClose} variant="ghost">
                  {onSubmit ? 'Cancel' : 'Close'}
                </Button>
                {onSubmit ? (
                  <Button type="submit" variant={submitVariant} busy={busy}>
                    {submitLabel}
                  </Button>
                ) : null}
              </>
            )}
          </div>
        </form>
      ) : null}
    </dialog>
  );
}
