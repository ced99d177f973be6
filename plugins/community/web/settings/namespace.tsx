import {
  Alert,
  type AuthenticatedUser,
  Button,
  Card,
  CopyField,
  Dialog,
  ErrorState,
  Loading,
  SelectField,
  Switch,
  sessionCalls,
  TextArea,
  TextField,
  useAction,
  useCan,
  useConsole,
  useNavigate,
  useResource,
  useToast,
  useUser,
} from '@gatehouse/console';
import { useEffect, useState } from 'react';
import { calls } from '../api';
import type { Namespace } from '../types';

const announcementLimit = 4096;

function SupportIdentifier({ tenant }: { tenant: string }) {
  const { api } = useConsole();
  const support = useResource(
    () =>
      api.call<{ identifier: string }>(calls.supportIdentifier, {
        params: { tenant },
        context: 'Could not load the support identifier',
      }),
    [api, tenant],
  );
  if (support.error) return <p className="muted">{support.error}</p>;
  if (!support.data) return <div className="skeleton" style={{ width: 320 }} />;
  return <CopyField label="support identifier" value={support.data.identifier} />;
}

/** How long recordings are kept, as the setting's choices say it. */
function retentionText(days: number): string {
  if (days === 365) return 'for 1 year';
  return `for ${days} ${days === 1 ? 'day' : 'days'}`;
}

/** The retention choices, with the namespace's own value when it is none of them (set through the API). */
function retentionChoices(current: number): { value: string; label: string }[] {
  const days = [0, 7, 30, 90, 365];
  return [...days, ...(days.includes(current) ? [] : [current])].map((d) => ({
    value: String(d),
    label: d === 0 ? 'Until deleted' : retentionText(d).replace(/^for /, ''),
  }));
}

export function NamespaceTab() {
  const { api, replaceUser } = useConsole();
  const user = useUser();
  const toast = useToast();
  const can = useCan();
  const navigate = useNavigate();
  const namespace = useResource(
    () =>
      api.call<Namespace>(calls.getNamespace, {
        params: { tenant: user.tenant },
        context: 'Could not load the namespace',
      }),
    [api, user.tenant],
  );
  // Unedited fields show the namespace as loaded (no empty first frame); an edit holds its own text until the
  // namespace is loaded again.
  const [name, setName] = useState<string | null>(null);
  const [announcement, setAnnouncement] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<'delete' | 'leave' | null>(null);
  const [confirmName, setConfirmName] = useState('');
  const [confirmTried, setConfirmTried] = useState(false);
  const save = useAction();
  const recording = useAction();
  const danger = useAction();

  useEffect(() => {
    if (!namespace.data) return;
    setName(null);
    setAnnouncement(null);
  }, [namespace.data]);

  if (!user.tenant)
    return (
      <Alert kind="info" title="No namespace">
        Create a namespace from the namespace menu at the top.
      </Alert>
    );
  if (namespace.error) return <ErrorState message={namespace.error} onRetry={namespace.reload} />;
  if (!namespace.data) return <Loading />;
  const ns = namespace.data;
  const nameValue = name ?? ns.name;
  const announcementValue = announcement ?? ns.settings?.connection_announcement ?? '';
  const isOwner = ns.owner === user.id;
  const mayUpdate = can(calls.updateNamespace, 'change the namespace');
  const mayRecord = can(calls.setSessionRecord, 'change session recording');

  // The server merges the settings it is sent into the stored ones, so a change names only what it changes.
  const update = async (
    body: Omit<Partial<Namespace>, 'settings'> & { settings?: Partial<Namespace['settings']> },
    done: string,
  ) => {
    const ok = await save.run(() =>
      api.call(calls.updateNamespace, {
        params: { tenant: ns.tenant_id },
        body,
        context: 'Could not save the namespace',
      }),
    );
    if (ok) {
      toast(done);
      namespace.reload();
    }
  };

  const setRecording = async (on: boolean) => {
    const ok = await recording.run(() =>
      api.call(calls.setSessionRecord, {
        params: { tenant: ns.tenant_id },
        body: { session_record: on },
        context: 'Could not change session recording',
      }),
    );
    if (ok) {
      toast(on ? 'Sessions will be recorded' : 'Session recording is off');
      namespace.reload();
    }
  };

  const moveToAnotherNamespace = async () => {
    const list = await api.page<Namespace>(sessionCalls.listNamespaces, {
      query: { page: 1, per_page: 100 },
    });
    const next = list.items.find((n) => n.tenant_id !== ns.tenant_id);
    if (next) {
      const swapped = await api.call<Partial<AuthenticatedUser>>(sessionCalls.switchNamespace, {
        params: { tenant: next.tenant_id },
      });
      replaceUser({ ...swapped, tenant: next.tenant_id });
    } else replaceUser({ tenant: '' });
  };

  const remove = async () => {
    const ok = await danger.run(async () => {
      if (confirming === 'delete') {
        await api.call(calls.deleteNamespace, {
          params: { tenant: ns.tenant_id },
          context: 'Could not delete the namespace',
        });
        await moveToAnotherNamespace();
      } else {
        const fresh = await api.call<Partial<AuthenticatedUser>>(calls.leaveNamespace, {
          params: { tenant: ns.tenant_id },
          context: 'Could not leave the namespace',
        });
        replaceUser({ ...fresh, tenant: fresh.tenant ?? '' });
      }
    });
    if (ok) {
      toast(confirming === 'delete' ? `${ns.name} deleted` : `You left ${ns.name}`);
      setConfirming(null);
      navigate('/');
    }
  };

  return (
    <div className="stack">
      <Card title="Namespace">
        <form
          className="card-body form"
          style={{ maxWidth: 560 }}
          onSubmit={(e) => {
            e.preventDefault();
            void update({ name: nameValue.trim() }, 'Namespace renamed');
          }}
        >
          {save.error ? <Alert>{save.error}</Alert> : null}
          <TextField
            label="Name"
            value={nameValue}
            onChange={(e) => setName(e.target.value)}
            minLength={3}
            maxLength={30}
            pattern="[a-z0-9]([a-z0-9\-]*[a-z0-9])?"
            required
            hint="Lowercase letters, digits and inner hyphens; part of every SSH address in this namespace."
          />
          <div>
            <Button
              type="submit"
              variant="primary"
              busy={save.pending}
              disabled={!mayUpdate.allowed || nameValue.trim() === ns.name}
              title={mayUpdate.reason || undefined}
            >
              Rename
            </Button>
          </div>
          <div className="field">
            <span className="label">Tenant ID</span>
            <CopyField label="tenant ID" value={ns.tenant_id} />
            <span className="hint">Agents join this namespace with it.</span>
          </div>
          <div className="field">
            <span className="label">Support identifier</span>
            <SupportIdentifier tenant={ns.tenant_id} />
            <span className="hint">Give this to support staff so they can find your namespace.</span>
          </div>
          <p className="muted">
            {ns.device_count ?? 0} of {ns.max_devices > 0 ? ns.max_devices : 'unlimited'} devices in use.
          </p>
        </form>
      </Card>
      <Card title="Session recording">
        <div className="card-body stack" style={{ gap: 10 }}>
          {recording.error ? <Alert>{recording.error}</Alert> : null}
          <Switch
            label="Record the terminal output of every session"
            checked={Boolean(ns.settings?.session_record)}
            onChange={setRecording}
            disabled={!mayRecord.allowed || recording.pending}
            title={mayRecord.reason || undefined}
          />
          <p className="muted">Recordings can be played back from each session's page.</p>
          <SelectField
            label="Keep recordings"
            value={String(ns.settings?.recording_retention_days ?? 0)}
            options={retentionChoices(ns.settings?.recording_retention_days ?? 0)}
            disabled={!mayUpdate.allowed || save.pending}
            title={mayUpdate.reason || undefined}
            hint="Counted from each session's start. A removed recording leaves a note on its session."
            onChange={(e) => {
              const days = Number(e.target.value);
              void update(
                // Only this setting: the server keeps the others as they are now, whoever changed them.
                { settings: { recording_retention_days: days } },
                days === 0 ? 'Recordings are kept' : `Recordings are kept ${retentionText(days)}`,
              );
            }}
          />
          <Switch
            label="Allow share links to live sessions"
            checked={ns.settings?.session_share_links === true}
            onChange={(on) =>
              void update(
                { settings: { session_share_links: on } },
                on ? 'Share links are allowed' : 'Share links are off: every link stopped working',
              )
            }
            disabled={!mayUpdate.allowed || save.pending}
            title={mayUpdate.reason || undefined}
          />
          <p className="muted">
            Administrators may then make read-only links to a live recorded session, for people without an
            account, each working for at most a day. Turning this off stops every link: at once for new
            viewers, within 15 seconds for those watching.
          </p>
        </div>
      </Card>
      <Card title="Connection announcement">
        <form
          className="card-body form"
          onSubmit={(e) => {
            e.preventDefault();
            void update({ settings: { connection_announcement: announcementValue } }, 'Announcement saved');
          }}
        >
          <TextArea
            label="Message shown before the shell"
            value={announcementValue}
            onChange={(e) => setAnnouncement(e.target.value)}
            maxLength={announcementLimit}
            hint={`${announcementValue.length} of ${announcementLimit} characters. Shown to everyone who connects over SSH.`}
          />
          <div>
            <Button
              type="submit"
              variant="primary"
              busy={save.pending}
              disabled={
                !mayUpdate.allowed || announcementValue === (ns.settings?.connection_announcement ?? '')
              }
              title={mayUpdate.reason || undefined}
            >
              Save announcement
            </Button>
          </div>
        </form>
      </Card>
      <Card title="Danger zone">
        <div className="card-body row" style={{ justifyContent: 'space-between' }}>
          <p className="muted" style={{ maxWidth: 560 }}>
            {isOwner
              ? 'Deleting the namespace removes its devices, sessions, keys and rules. This cannot be undone.'
              : 'Leaving takes away your access to this namespace and its devices.'}
          </p>
          <Button
            variant="danger"
            onClick={() => {
              danger.clearError();
              setConfirmName('');
              setConfirmTried(false);
              setConfirming(isOwner ? 'delete' : 'leave');
            }}
          >
            {isOwner ? 'Delete namespace' : 'Leave namespace'}
          </Button>
        </div>
      </Card>
      <Dialog
        open={confirming !== null}
        title={confirming === 'delete' ? `Delete ${ns.name}?` : `Leave ${ns.name}?`}
        description={
          confirming === 'delete'
            ? 'Type the namespace name to confirm.'
            : 'You will need a new invitation to come back.'
        }
        onClose={() => setConfirming(null)}
        onSubmit={() => {
          if (confirming === 'delete' && confirmName !== ns.name) {
            setConfirmTried(true);
            return;
          }
          void remove();
        }}
        submitLabel={confirming === 'delete' ? 'Delete forever' : 'Leave'}
        submitVariant="danger"
        busy={danger.pending}
        error={danger.error}
      >
        {confirming === 'delete' ? (
          <TextField
            label="Namespace name"
            value={confirmName}
            onChange={(e) => setConfirmName(e.target.value)}
            error={confirmTried && confirmName !== ns.name ? `Type ${ns.name} to confirm.` : null}
            autoFocus
          />
        ) : null}
      </Dialog>
    </div>
  );
}
