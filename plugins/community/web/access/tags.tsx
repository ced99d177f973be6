import {
  Button,
  Card,
  ConfirmDialog,
  Dialog,
  Empty,
  ErrorState,
  icons,
  Loading,
  PageHeader,
  ScrollFrame,
  TextField,
  useAction,
  useApi,
  useCan,
  useFormDialog,
  useResource,
  useToast,
  useUser,
} from '@gatehouse/console';
import { useState } from 'react';
import { calls } from '../api';

export function TagsPage() {
  const api = useApi();
  const user = useUser();
  const toast = useToast();
  const can = useCan();
  const tags = useResource(
    () => api.call<string[] | null>(calls.listTags, { context: 'Could not load the tags' }),
    [api, user.tenant],
  );
  const [removing, setRemoving] = useState<string | null>(null);
  const action = useAction();
  const list = tags.data ?? [];
  const problemOf = (to: string) =>
    to.trim().length < 3 || to.trim().length > 255 ? 'A tag is 3 to 255 characters long.' : null;
  const renaming = useFormDialog({
    action,
    valid: (d) => !problemOf(d.to),
    send: (d: { to: string }, tag: string | null) =>
      api.call(calls.renameTag, {
        params: { tag: tag ?? '' },
        body: { tag: d.to.trim() },
        context: 'Could not rename the tag',
      }),
    done: () => {
      toast('Tag renamed');
      tags.reload();
    },
  });

  return (
    <>
      <PageHeader
        title="Tags"
        description="Tags group devices for public keys and firewall rules. Add them from a device's page."
      />
      <Card>
        {tags.error ? (
          <ErrorState message={tags.error} onRetry={tags.reload} />
        ) : !tags.data && tags.loading ? (
          <Loading />
        ) : list.length === 0 ? (
          <Empty title="No tags yet" icon={icons.tag}>
            Tag a device from its page; its tags are listed here to rename or delete.
          </Empty>
        ) : (
          <ScrollFrame label="Tags">
            <table className="table" aria-label="Tags">
              <thead>
                <tr>
                  <th>Tag</th>
                  <th className="actions">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.map((tag) => (
                  <tr key={tag}>
                    <td>
                      <span className="badge badge-accent">{tag}</span>
                    </td>
                    <td className="actions">
                      <Button
                        size="sm"
                        variant="ghost"
                        {...can(calls.renameTag, 'rename tags').gate}
                        onClick={() => renaming.open({ to: tag }, tag)}
                        aria-label={`Rename tag ${tag}`}
                      >
                        Rename
                      </Button>
                      <Button
                        size="sm"
                        variant="ghost"
                        {...can(calls.deleteTag, 'delete tags').gate}
                        onClick={() => {
                          action.clearError();
                          setRemoving(tag);
                        }}
                        aria-label={`Delete tag ${tag}`}
                      >
                        Delete
                      </Button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollFrame>
        )}
      </Card>
      <Dialog
        {...renaming.dialog}
        title={`Rename ${renaming.subject ?? ''}`}
        description="Every device, public key and firewall rule with this tag gets the new name."
        submitLabel="Rename"
      >
        {renaming.draft ? (
          <TextField
            label="New name"
            value={renaming.draft.to}
            onChange={(e) => renaming.change({ to: e.target.value })}
            error={problemOf(renaming.draft.to)}
            autoFocus
          />
        ) : null}
      </Dialog>
      <ConfirmDialog
        subject={removing}
        title={(tag) => `Delete ${tag}?`}
        description="The tag is taken off every device, public key and firewall rule that has it."
        action={action}
        onConfirm={(tag) =>
          api.call(calls.deleteTag, { params: { tag }, context: 'Could not delete the tag' })
        }
        onDone={() => {
          toast('Tag deleted');
          tags.reload();
        }}
        onClose={() => setRemoving(null)}
      />
    </>
  );
}
