import {
  Button,
  Card,
  ConfirmDialog,
  Dialog,
  Empty,
  ScrollFrame,
  TextField,
  useApi,
  useCan,
  useFormDialog,
  useToast,
} from '@gatehouse/console';
import { useState } from 'react';
import type { Device } from '../types';
import { FIELD_KEY } from './filters';
import type { DeviceKind } from './kind';

/** The server's rules for a custom field: the key (FIELD_KEY), the value's length, the count. */
export const FIELD_VALUE_MAX = 256;
export const FIELDS_MAX = 32;

export function fieldKeyProblem(key: string): string | null {
  if (key.length === 0) return 'Give the field a name.';
  if (key.length > 64) return `A field name has at most 64 characters (this one has ${key.length}).`;
  if (key === '.' || key === '..') return 'A field name cannot be “.” or “..”.';
  if (!FIELD_KEY.test(key)) return 'A field name holds letters, digits, “_”, “-” and “.” only.';
  return null;
}

export function fieldValueProblem(value: string): string | null {
  return value.length > FIELD_VALUE_MAX
    ? `A value has at most ${FIELD_VALUE_MAX} characters (this one has ${value.length}).`
    : null;
}

/**
 * A device's custom fields: the namespace's own metadata (owner, location, asset number), each set and removed on
 * its own. The list can show one of them as a column, sort by it and filter on it.
 */
export function CustomFields({
  device,
  kind,
  onChanged,
}: {
  device: Device;
  kind: DeviceKind;
  onChanged: () => void;
}) {
  const api = useApi();
  const toast = useToast();
  const can = useCan();
  const mayChange = can(kind.calls.setField, `change the custom fields of ${kind.noun}s`);
  const mayRemove = can(kind.calls.removeField, `change the custom fields of ${kind.noun}s`);
  const [removing, setRemoving] = useState<string | null>(null);
  const fields = Object.entries(device.custom_fields ?? {}).sort(([a], [b]) => a.localeCompare(b));
  const full = fields.length >= FIELDS_MAX;
  const form = useFormDialog<{ key: string; value: string }, string>({
    valid: (d, editing) =>
      (editing !== null || !fieldKeyProblem(d.key.trim())) && !fieldValueProblem(d.value),
    send: (d, editing) =>
      api.call(kind.calls.setField, {
        params: { uid: device.uid, key: editing ?? d.key.trim() },
        body: { value: d.value },
        context: 'Could not save the field',
      }),
    done: (_, d, editing) => {
      toast(`${editing ?? d.key.trim()} saved`);
      onChanged();
    },
  });
  const draft = form.draft;
  const taken = draft && form.subject === null && fields.some(([k]) => k === draft.key.trim());
  return (
    <Card
      title="Custom fields"
      actions={
        <Button
          size="sm"
          {...mayChange.gate}
          disabled={!mayChange.allowed || full}
          title={
            mayChange.reason || (full ? `A ${kind.noun} holds at most ${FIELDS_MAX} fields.` : undefined)
          }
          onClick={() => form.open({ key: '', value: '' })}
        >
          Add field
        </Button>
      }
    >
      {fields.length === 0 ? (
        <Empty title="No custom fields">
          Record what your team needs to know about this {kind.noun}, such as its owner, location or asset
          number. The {kind.noun} list can show a field as a column, sort by it and filter on it.
        </Empty>
      ) : (
        <ScrollFrame label="Custom fields">
          <table className="table" aria-label="Custom fields">
            <thead>
              <tr>
                <th>Field</th>
                <th>Value</th>
                <th className="actions">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {fields.map(([key, value]) => (
                <tr key={key}>
                  <td className="mono">{key}</td>
                  <td style={{ overflowWrap: 'anywhere' }}>
                    {value || <span className="faint">empty</span>}
                  </td>
                  <td className="actions">
                    <div className="row" style={{ justifyContent: 'flex-end', gap: 6, flexWrap: 'nowrap' }}>
                      <Button
                        size="sm"
                        variant="ghost"
                        aria-label={`Edit ${key}`}
                        {...mayChange.gate}
                        onClick={() => form.open({ key, value }, key)}
                      >
                        Edit
                      </Button>
                      <Button
                        size="sm"
                        variant="ghost"
                        aria-label={`Remove ${key}`}
                        {...mayRemove.gate}
                        onClick={() => setRemoving(key)}
                      >
                        Remove
                      </Button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollFrame>
      )}
      <Dialog
        {...form.dialog}
        title={form.subject ? `Edit ${form.subject}` : 'Add a custom field'}
        submitLabel={form.subject ? 'Save' : 'Add field'}
      >
        {draft ? (
          <>
            {form.subject === null ? (
              <TextField
                label="Field"
                value={draft.key}
                onChange={(e) => form.change({ key: e.target.value })}
                hint="Up to 64 letters, digits, “_”, “-” or “.”, such as owner or asset.number."
                error={
                  draft.key || form.touched
                    ? (fieldKeyProblem(draft.key.trim()) ??
                      (taken ? 'This field exists: saving changes its value.' : null))
                    : null
                }
                autoFocus
                required
              />
            ) : null}
            <TextField
              label="Value"
              value={draft.value}
              onChange={(e) => form.change({ value: e.target.value })}
              hint={`Up to ${FIELD_VALUE_MAX} characters.`}
              error={fieldValueProblem(draft.value)}
              autoFocus={form.subject !== null}
            />
          </>
        ) : null}
      </Dialog>
      <ConfirmDialog
        subject={removing}
        title={(key) => `Remove ${key}?`}
        description={`The field is taken off this ${kind.noun}; other ${kind.noun}s keep theirs.`}
        confirmLabel="Remove"
        onConfirm={(key) =>
          api.call(kind.calls.removeField, {
            params: { uid: device.uid, key },
            context: 'Could not remove the field',
          })
        }
        onDone={(key) => {
          toast(`${key} removed`);
          onChanged();
        }}
        onClose={() => setRemoving(null)}
      />
    </Card>
  );
}
