import { type FormEvent, type ReactNode, useEffect, useId, useRef } from 'react';
import { type Action, useAction } from '../resource';
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

/**
 * Asks before something that cannot be undone (delete, remove): open while `subject` is set. Confirming runs
 * `onConfirm(subject)`; once that succeeded, `onDone(subject)` (say so, reload) and then `onClose`. A failure stays
 * in the dialog, in words, so the person can try again or cancel.
 */
export function ConfirmDialog<T>({
  subject,
  title,
  description,
  confirmLabel = 'Delete',
  action,
  onConfirm,
  onDone,
  onClose,
}: {
  subject: T | null | undefined;
  title: string | ((subject: T) => string);
  description?: ReactNode | ((subject: T) => ReactNode);
  confirmLabel?: string;
  /** The screen's own action, when the screen also shows its pending state or error; else the dialog keeps one. */
  action?: Action;
  onConfirm: (subject: T) => Promise<unknown>;
  onDone: (subject: T) => void;
  onClose: () => void;
}) {
  const own = useAction();
  const running = action ?? own;
  const open = subject !== null && subject !== undefined;
  return (
    <Dialog
      open={open}
      title={open ? (typeof title === 'function' ? title(subject) : title) : ''}
      description={
        open && typeof description === 'function' ? description(subject) : (description as ReactNode)
      }
      onClose={onClose}
      submitLabel={confirmLabel}
      submitVariant="danger"
      busy={running.pending}
      error={running.error}
      onSubmit={async () => {
        if (!open) return;
        if (await running.run(() => onConfirm(subject))) {
          onDone(subject);
          onClose();
        }
      }}
    />
  );
}
