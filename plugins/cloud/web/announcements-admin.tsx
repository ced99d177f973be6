import {
  Alert,
  Button,
  Card,
  createColumnHelper,
  DataTable,
  Dialog,
  Empty,
  formatDate,
  PageHeader,
  TextArea,
  TextField,
  useAction,
  useApi,
  usePagedList,
} from '@gatehouse/console';
import { useState } from 'react';
import type { Announcement, AnnouncementSummary } from '../announcements/schemas';
import { calls } from './api';

/**
 * Instance, Announcements: publish, edit and withdraw. A module of its own, loaded when an instance administrator
 * opens the page: the overlay in ./announcements is on every screen, so it is in the plugin's first chunk.
 */
export function AnnouncementsAdminPage() {
  const api = useApi();
  const { list, table } = usePagedList(
    (query) =>
      api.page<AnnouncementSummary>(calls.listAnnouncements, {
        query: { page: query.page, per_page: query.perPage },
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
  // Made on every render, so the buttons call this render's handlers.
  const column = createColumnHelper<AnnouncementSummary>();
  const columns = [
    column.accessor('title', { header: 'Title' }),
    column.accessor('date', { header: 'Published', cell: (ctx) => formatDate(ctx.getValue()) }),
    column.display({
      id: 'actions',
      header: () => <span className="sr-only">Actions</span>,
      cell: (ctx) => (
        <div className="row">
          <Button size="sm" onClick={() => open(ctx.row.original.uuid)}>
            Edit
          </Button>
          <Button size="sm" variant="danger" onClick={() => withdraw(ctx.row.original.uuid)}>
            Withdraw
          </Button>
        </div>
      ),
    }),
  ];
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
        <DataTable
          label="Announcements"
          columns={columns}
          {...table}
          rowKey={(a) => a.uuid}
          empty={<Empty title="No announcements" />}
        />
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
