import type { FilterItem } from '@gatehouse/console';
import type { DeviceStatus } from '../types';

/**
 * The list's filters, kept in the address (`?q=&tag=&os=&online=&field=&value=`) so that a reload or a shared link
 * keeps them. `field` is a custom field the list shows as a column (and may sort by); `value` filters on it.
 */
export interface Filters {
  q: string;
  tag: string;
  os: string;
  online: '' | 'online' | 'offline';
  field: string;
  value: string;
}

/**
 * A custom field key as the server takes it: 1 to 64 letters, digits, `_`, `-` or `.`, and not `.` or `..` (a
 * browser folds those path segments into the path around them).
 */
export const FIELD_KEY = /^(?!\.{1,2}$)[A-Za-z0-9_.-]{1,64}$/;

export function readFilters(search: string): Filters {
  const p = new URLSearchParams(search);
  const online = p.get('online');
  // A field the server would refuse is no filter; a value without a field neither.
  const field = p.get('field') ?? '';
  const known = FIELD_KEY.test(field) ? field : '';
  return {
    q: p.get('q') ?? '',
    tag: p.get('tag') ?? '',
    os: p.get('os') ?? '',
    online: online === 'online' || online === 'offline' ? online : '',
    field: known,
    value: known ? (p.get('value') ?? '') : '',
  };
}

export function filterSearch(f: Filters): string {
  const p = new URLSearchParams();
  for (const key of ['q', 'tag', 'os', 'online', 'field', 'value'] as const) if (f[key]) p.set(key, f[key]);
  const text = p.toString();
  return text ? `?${text}` : '';
}

export const noFilters: Filters = { q: '', tag: '', os: '', online: '', field: '', value: '' };

/**
 * The API filter of the list's filters: the search term on name, tag or address, then each chosen filter. Items
 * join by the operator before them, so the search's `or`s stay inside it.
 */
export function fleetFilter(f: Filters, status: DeviceStatus): FilterItem[] {
  const prop = (name: string, operator: 'contains' | 'eq' | 'bool', value: unknown): FilterItem => ({
    type: 'property',
    params: { name, operator, value },
  });
  const or: FilterItem = { type: 'operator', params: { name: 'or' } };
  const and: FilterItem = { type: 'operator', params: { name: 'and' } };
  const items: FilterItem[] = [];
  const q = f.q.trim();
  if (q)
    items.push(
      prop('name', 'contains', q),
      or,
      prop('tags', 'contains', q),
      or,
      prop('remote_addr', 'contains', q),
    );
  const more: FilterItem[] = [];
  if (f.tag) more.push(prop('tags', 'contains', f.tag));
  if (f.os) more.push(prop('info.id', 'eq', f.os));
  if (f.online && status === 'accepted') more.push(prop('online', 'bool', f.online === 'online'));
  const value = f.value.trim();
  if (f.field && value) more.push(prop(`custom_fields.${f.field}`, 'contains', value));
  for (const item of more) items.push(...(items.length ? [and] : []), item);
  return items;
}

/**
 * One choice per operating system id (the list filters on info.id): versions of one system add up, named by the
 * most used one's pretty name (the server answers most used first).
 */
export function byOsId(
  rows: { id: string; pretty_name: string; count: number }[],
): { id: string; pretty_name: string; count: number }[] {
  const found = new Map<string, { id: string; pretty_name: string; count: number }>();
  for (const r of rows) {
    if (!r.id) continue;
    const had = found.get(r.id);
    if (had) had.count += r.count;
    else found.set(r.id, { ...r });
  }
  return [...found.values()];
}
