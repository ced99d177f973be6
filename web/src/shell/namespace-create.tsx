import { type FormEvent, useState } from 'react';
import { sessionCalls } from './api/calls';
import type { AuthenticatedUser, NamespaceSummary } from './api/types';
import { type Action, useAction } from './resource';
import { useNavigate } from './router';
import { useConsole } from './session';
import { Button, TextField } from './ui/controls';
import { Alert, useToast } from './ui/feedback';
import { Card } from './ui/page';

/**
 * Creating a namespace and switching to it, as the namespace menu and the first-namespace guide on Home both do:
 * the server makes the caller its owner, the session moves to it (a new token for the tenant), and the console
 * goes home.
 */
export function useCreateNamespace(): { create: (name: string) => Promise<boolean>; action: Action } {
  const { api, replaceUser } = useConsole();
  const toast = useToast();
  const navigate = useNavigate();
  const action = useAction();
  const create = async (name: string) => {
    const ok = await action.run(async () => {
      const created = await api.call<NamespaceSummary>(sessionCalls.createNamespace, {
        body: { name },
        context: 'Could not create the namespace',
      });
      const next = await api.call<Partial<AuthenticatedUser>>(sessionCalls.switchNamespace, {
        params: { tenant: created.tenant_id },
      });
      replaceUser({ ...next, tenant: created.tenant_id });
    });
    if (ok) {
      toast(`Namespace ${name} created`);
      navigate('/');
    }
    return ok;
  };
  return { create, action };
}

/** The namespace name field, with the rule the server applies (it is part of every SSH address). */
export function NamespaceNameField({
  value,
  onChange,
  autoFocus,
}: {
  value: string;
  onChange: (name: string) => void;
  autoFocus?: boolean;
}) {
  return (
    <TextField
      label="Name"
      value={value}
      onChange={(e) => onChange(e.target.value)}
      required
      minLength={3}
      maxLength={30}
      pattern="[a-z0-9]([a-z0-9\-]*[a-z0-9])?"
      hint="3 to 30 characters: lowercase letters, digits and inner hyphens. It is part of every SSH address."
      autoFocus={autoFocus}
    />
  );
}

/**
 * What a signed-in person without any namespace sees instead of a namespace's pages (a new cloud sign-up, or
 * someone whose last namespace was deleted): what a namespace is, and a form that creates their first one.
 */
export function FirstNamespace() {
  const [name, setName] = useState('');
  const { create, action } = useCreateNamespace();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void create(name);
  };
  return (
    <Card title="Create your first namespace">
      <form className="card-body stack" style={{ gap: 12 }} onSubmit={submit}>
        <p className="muted">
          A namespace holds your devices, the people who may reach them and their settings. You become its
          owner; devices register into it with its tenant ID, which the install command here carries once it
          exists. Joining someone else's instead? It appears in the namespace menu at the top once they have
          added you (or you have accepted their invitation).
        </p>
        <NamespaceNameField value={name} onChange={setName} />
        {action.error ? <Alert kind="error">{action.error}</Alert> : null}
        <div>
          <Button type="submit" variant="primary" busy={action.pending}>
            Create namespace
          </Button>
        </div>
      </form>
    </Card>
  );
}
