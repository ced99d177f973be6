import { Invalid } from '@gatehouse/core';
import { isValidPattern, type PatternCache } from './pattern';
import type { DeviceFilter } from './schemas';

/** How a device filter is stored: two nullable columns, exactly one of them set. */
export interface FilterColumns {
  filter_hostname: string | null;
  filter_tags: string[] | null;
}

export function filterColumns(filter: DeviceFilter): FilterColumns {
  if ('tags' in filter) return { filter_hostname: null, filter_tags: filter.tags };
  if (!isValidPattern(filter.hostname))
    throw new Invalid(['filter.hostname'], 'not a valid regular expression');
  return { filter_hostname: filter.hostname, filter_tags: null };
}

export function filterOf(row: FilterColumns): DeviceFilter {
  return row.filter_tags ? { tags: row.filter_tags } : { hostname: row.filter_hostname ?? '' };
}

/** What a filter is checked against: the device being reached. */
export interface DeviceFacts {
  name: string;
  tags: string[];
}

/** A tag filter matches when the device carries any of the tags; a hostname filter matches its name. */
export function filterMatches(row: FilterColumns, device: DeviceFacts, patterns: PatternCache): boolean {
  if (row.filter_tags) return row.filter_tags.some((t) => device.tags.includes(t));
  return patterns.test(row.filter_hostname ?? '', device.name);
}

/** Tag lists: 1 to 3 unique tags. */
export function checkTagLimit(tags: string[]): void {
  if (tags.length > 3) throw new Invalid(['tags'], 'at most 3 tags');
}
