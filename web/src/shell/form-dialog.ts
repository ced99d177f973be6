import { useState } from 'react';
import { type Action, useAction } from './resource';

/** A create-or-edit dialog's state, and the props its `Dialog` takes (`<Dialog {...form.dialog} title=...>`). */
export interface FormDialog<D, S> {
  /** The draft while the dialog is open; null while it is closed. */
  draft: D | null;
  /** What the dialog edits; null for a new one (and while closed). */
  subject: S | null;
  /** Whether the person has tried to send the draft: from then on every field shows its problem. */
  touched: boolean;
  /** The action that sends the draft: its pending state and error are the dialog's. */
  action: Action;
  /** Opens the dialog on a draft: of `subject` to edit it, or of nothing (null) to make a new one. */
  open(draft: D, subject?: S | null): void;
  close(): void;
  /** Changes some fields of the draft. */
  change(patch: Partial<D>): void;
  dialog: {
    open: boolean;
    onClose: () => void;
    onSubmit: () => Promise<void>;
    busy: boolean;
    error: string | null;
  };
}

/**
 * The skeleton every create and edit dialog of the console shares: open on a draft (clearing the last error), change
 * fields, and on submit mark the form touched, keep it open while `valid` says no, else `send` it as one action (its
 * failure stays in the dialog, in words), and once it succeeded close and hand the answer to `done` (say so,
 * reload). The draft's and the subject's types come from `send`'s parameters.
 */
export function useFormDialog<D, S = never, A = unknown>(o: {
  send: (draft: D, subject: S | null) => Promise<A>;
  valid?: (draft: D, subject: S | null) => boolean;
  done?: (answer: A, draft: D, subject: S | null) => void;
  /** The screen's own action, when its other dialogs share the pending state and error; else the hook keeps one. */
  action?: Action;
}): FormDialog<D, S> {
  const own = useAction();
  const action = o.action ?? own;
  const [state, setState] = useState<{ draft: D; subject: S | null } | null>(null);
  const [touched, setTouched] = useState(false);
  const close = () => setState(null);
  const submit = async () => {
    if (!state) return;
    setTouched(true);
    const { draft, subject } = state;
    if (o.valid && !o.valid(draft, subject)) return;
    let answer: A | undefined;
    const ok = await action.run(async () => {
      answer = await o.send(draft, subject);
    });
    if (!ok) return;
    close();
    o.done?.(answer as A, draft, subject);
  };
  return {
    draft: state?.draft ?? null,
    subject: state?.subject ?? null,
    touched,
    action,
    open(draft, subject = null) {
      action.clearError();
      setTouched(false);
      setState({ draft, subject });
    },
    close,
    change: (patch) => setState((s) => (s ? { ...s, draft: { ...s.draft, ...patch } } : s)),
    dialog: {
      open: state !== null,
      onClose: close,
      onSubmit: submit,
      busy: action.pending,
      error: action.error,
    },
  };
}
