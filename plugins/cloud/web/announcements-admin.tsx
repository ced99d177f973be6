import {
  Alert,
  Button,
  Card,
  Dialog,
  Empty,
  ErrorState,
  formatDate,
  Loading,
  PageHeader,
  TextArea,
  TextField,
  useAction,
  useApi,
  useResource,
} from '@gatehouse/console';
import { useState } from 'react';
import type { Announcement, AnnouncementSummary } from './announcements';
import { calls } from './api';

/**
 * Instance, Announcements: publish, edit and withdraw. A module of its own, loaded when an instance administrator
 * opens the page: the overlay in ./announcements is on every screen, so it is in the plugin's first chunk.
 */
export function AnnouncementsAdminPage() {
  const api = useApi();
  const list = useResource(
    () =>
      api.call<AnnouncementSummary[]>(calls.listAnnouncements, {
        query: { per_page: 100 },
        context: 'Could not load the announcements',
      }),
    [api],
  );
  const [editing, setEditing] = useState<{ uuid?: string; title: string; content: string } | null>(null);
  const action = useAction();
  const open = async (uuid?: string) => {
    if (!uuid) return setEditing({ title: '', content: '' });
    await action.run(async () => {
      const a = await api.call<Announcement>(calls.getAnnouncement, { params: { uuid } });
      setEditing({ uuid, title: a.title, content: a.content });
    });
  };
  const save = async () => {
    if (!editing) return;
    const body = { title: editing.title, content: editing.content };
    const ok = await action.run(() =>
      editing.uuid
        ? api.call(calls.editAnnouncement, {
            params: { uuid: editing.uuid },
            body,
            context: 'Could not save',
          })
        : api.call(calls.publishAnnouncement, { body, context: 'Could not publish' }),
    );
    if (ok) {
      setEditing(null);
      list.reload();
    }
  };
  const withdraw = async (uuid: string) => {
    const ok = await action.run(() =>
      api.call(calls.withdrawAnnouncement, { params: { uuid }, context: 'Could not withdraw' }),
    );
    if (ok) list.reload();
  };
  return (
    <>
      <PageHeader
        title="Announcements"
        description="News every console user sees once, newest first. Markdown; scripts and unsafe links are removed."
        actions={
          <Button variant="primary" onClick={() => open()}>
            Publish announcement
          </Button>
        }
      />
      {action.error && !editing ? <Alert>{action.error}</Alert> : null}
      <Card>
        {list.loading ? <Loading /> : null}
        {list.error ? <ErrorState message={list.error} onRetry={list.reload} /> : null}
        {list.data && list.data.length === 0 ? <Empty title="No announcements" /> : null}
        {list.data && list.data.length > 0 ? (
          <table className="table">
            <thead>
              <tr>
                <th>Title</th>
                <th>Published</th>
                <th>
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((a) => (
                <tr key={a.uuid}>
                  <td>{a.title}</td>
                  <td>{formatDate(a.date)}</td>
                  <td className="row">
                    <Button size="sm" onClick={() => open(a.uuid)}>
                      Edit
                    </Button>
                    <Button size="sm" variant="danger" onClick={() => withdraw(a.uuid)}>
                      Withdraw
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
      </Card>
      <Dialog
        open={editing !== null}
        title={editing?.uuid ? 'Edit announcement' : 'Publish announcement'}
        onClose={() => setEditing(null)}
        onSubmit={save}
        submitLabel={editing?.uuid ? 'Save' : 'Publish'}
        busy={action.pending}
        error={action.error}
      >
        <TextField
          label="Title"
          value={editing?.title ?? ''}
          maxLength={90}
          hint="At most 90 characters"
          onChange={(e) => editing && setEditing({ ...editing, title: e.target.value })}
          required
        />
        <TextArea
          label="Text (Markdown)"
          value={editing?.content ?? ''}
          rows={8}
          onChange={(e) => editing && setEditing({ ...editing, content: e.target.value })}
          required
        />
      </Dialog>
    </>
  );
}
