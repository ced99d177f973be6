import { SelectField, TextField } from '@gatehouse/console';
import { parseTags, tagProblem } from '../devices/dialogs';
import type { DeviceFilter } from '../types';

// Public keys and firewall rules both target devices either by a hostname pattern or by 1 to 3 tags.

export interface FilterDraft {
  mode: 'all' | 'hostname' | 'tags';
  hostname: string;
  tags: string;
}

export const emptyFilter: FilterDraft = { mode: 'all', hostname: '', tags: '' };

export function filterFromDraft(draft: FilterDraft): DeviceFilter {
  if (draft.mode === 'tags') return { tags: parseTags(draft.tags) };
  if (draft.mode === 'hostname') return { hostname: draft.hostname };
  return { hostname: '.*' };
}

export function draftFromFilter(filter: DeviceFilter): FilterDraft {
  if ('tags' in filter) return { mode: 'tags', hostname: '', tags: filter.tags.join(', ') };
  if (filter.hostname === '.*') return emptyFilter;
  return { mode: 'hostname', hostname: filter.hostname, tags: '' };
}

export function filterProblem(draft: FilterDraft): string | null {
  if (draft.mode === 'tags') {
    const tags = parseTags(draft.tags);
    return tags.length === 0 ? 'Give at least one tag.' : tagProblem(tags);
  }
  if (draft.mode === 'hostname' && !draft.hostname.trim()) return 'Give a hostname pattern.';
  return null;
}

export function describeFilter(filter: DeviceFilter) {
  if ('tags' in filter) {
    return (
      <div className="row" style={{ gap: 4 }}>
        {filter.tags.map((t) => (
          <span key={t} className="badge badge-accent">
            {t}
          </span>
        ))}
      </div>
    );
  }
  return filter.hostname === '.*' || filter.hostname === '' ? (
    <span className="muted">All devices</span>
  ) : (
    <code>{filter.hostname}</code>
  );
}

export function FilterFields({
  draft,
  onChange,
  showErrors,
}: {
  draft: FilterDraft;
  onChange: (d: FilterDraft) => void;
  showErrors: boolean;
}) {
  const problem = showErrors ? filterProblem(draft) : null;
  return (
    <>
      <SelectField
        label="Applies to"
        value={draft.mode}
        onChange={(e) => onChange({ ...draft, mode: e.target.value as FilterDraft['mode'] })}
        options={[
          { value: 'all', label: 'All devices' },
          { value: 'hostname', label: 'Devices whose name matches a pattern' },
          { value: 'tags', label: 'Devices with tags' },
        ]}
      />
      {draft.mode === 'hostname' ? (
        <TextField
          label="Device name pattern"
          value={draft.hostname}
          onChange={(e) => onChange({ ...draft, hostname: e.target.value })}
          hint="A regular expression, e.g. ^web-"
          error={problem}
          className="input mono"
        />
      ) : null}
      {draft.mode === 'tags' ? (
        <TextField
          label="Tags"
          value={draft.tags}
          onChange={(e) => onChange({ ...draft, tags: e.target.value })}
          hint="1 to 3 tags, separated by commas."
          error={problem}
        />
      ) : null}
    </>
  );
}
