import {
  ConfirmDialog,
  Dialog,
  TextField,
  useAction,
  useApi,
  useResource,
  useToast,
} from '@gatehouse/console';
import { useEffect, useState } from 'react';
import { TagInput } from '../access/tag-input';
import { calls } from '../api';
import type { Device } from '../types';
import type { DeviceKind } from './kind';

export type DeviceDialog = { kind: 'rename' | 'tags' | 'remove'; device: Device } | null;

/** Tag rules: 1 to 3 unique tags of 3 to 255 characters. */
export function tagProblem(tags: string[]): string | null {
  if (tags.length > 3) return 'A device can have at most 3 tags.';
  if (new Set(tags).size !== tags.length) return 'Each tag may appear only once.';
  const bad = tags.find((t) => t.length < 3 || t.length > 255);
  if (bad !== undefined) return `“${bad}” must be 3 to 255 characters long.`;
  return null;
}

export function parseTags(text: string): string[] {
  return text
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
}

export function DeviceDialogs({
  dialog,
  kind,
  onClose,
  onDone,
}: {
  dialog: DeviceDialog;
  kind: DeviceKind;
  onClose: () => void;
  onDone: (removed?: boolean) => void;
}) {
  const api = useApi();
  const toast = useToast();
  const action = useAction();
  const [name, setName] = useState('');
  const [tags, setTags] = useState<string[]>([]);
  const device = dialog?.device;
  // The namespace's tags, offered while editing a device's tags (loaded when that dialog opens).
  const existing = useResource(
    async () => (dialog?.kind === 'tags' ? ((await api.call<string[] | null>(calls.listTags)) ?? []) : []),
    [api, dialog?.kind],
  );

  useEffect(() => {
    action.clearError();
    setName(device?.name ?? '');
    setTags(device?.tags ?? []);
  }, [dialog]);

  if (!dialog || !device) return null;
  const close = () => onClose();

  if (dialog.kind === 'rename') {
    return (
      <Dialog
        open
        title={`Rename ${kind.noun}`}
        onClose={close}
        busy={action.pending}
        error={action.error}
        submitLabel="Rename"
        onSubmit={async () => {
          const ok = await action.run(() =>
            api.call(kind.calls.update, {
              params: { uid: device.uid },
              body: { name: name.trim() },
              context: `Could not rename the ${kind.noun}`,
            }),
          );
          if (ok) {
            toast(`Renamed to ${name.trim()}`);
            onDone();
          }
        }}
      >
        <TextField
          label="Name"
          value={name}
          onChange={(e) => setName(e.target.value)}
          required
          hint="The name is part of the SSH address, so use letters, digits and hyphens."
          pattern="[a-zA-Z0-9_\-]+"
          autoFocus
        />
      </Dialog>
    );
  }

  if (dialog.kind === 'tags') {
    const list = tags;
    const problem = tagProblem(list);
    return (
      <Dialog
        open
        title={`Tags of ${device.name}`}
        description="Tags group devices for public keys and firewall rules."
        onClose={close}
        busy={action.pending}
        error={action.error}
        submitLabel="Save tags"
        onSubmit={async () => {
          if (problem) return;
          const ok = await action.run(() =>
            api.call(kind.calls.tags, {
              params: { uid: device.uid },
              body: { tags: list },
              context: 'Could not save the tags',
            }),
          );
          if (ok) {
            toast('Tags saved');
            onDone();
          }
        }}
      >
        <TagInput
          label="Tags"
          tags={tags}
          onChange={setTags}
          suggestions={existing.data ?? []}
          hint="Up to 3 tags, each 3 to 255 characters. Press Enter or a comma to add one; the namespace's tags are suggested."
          error={problem}
        />
      </Dialog>
    );
  }

  return (
    <ConfirmDialog
      subject={device}
      title={(d) => `Remove ${d.name}?`}
      description={`The ${kind.noun} is removed from this namespace and its sessions end. If its agent keeps running it will ask to join again as pending.`}
      confirmLabel="Remove"
      action={action}
      onConfirm={(d) =>
        api.call(kind.calls.remove, { params: { uid: d.uid }, context: `Could not remove the ${kind.noun}` })
      }
      onDone={(d) => {
        toast(`${d.name} removed`);
        onDone(true);
      }}
      onClose={close}
    />
  );
}
