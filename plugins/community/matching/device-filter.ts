import { Invalid } from '@gatehouse/core';
import { Type as T } from '@sinclair/typebox';
import { isValidPattern, type PatternCache } from './pattern';

/**
 * Public keys and firewall rules reach devices by a hostname regular expression or by 1 to 3 unique tags
 * (SPEC.md section 3). Stored as two nullable columns, exactly one of them set.
 */
export type DeviceFilter = { hostname: string } | { tags: string[] };

/** Tags travel in paths: 3 to 255 characters without slash or white space, as device tags are. */
export const tagSchema = T.String({
  minLength: 3,
  maxLength: 255,
  pattern: '^[^/\\s]+$',
  description: 'A device tag.',
});
export const tagListSchema = T.Array(tagSchema, { minItems: 1, maxItems: 3, uniqueItems: true });

export const deviceFilterSchema = T.Union(
  [
    T.Object(
      { hostname: T.String({ maxLength: 255, description: 'Regular expression (RE2) on the device name.' }) },
      { additionalProperties: false },
    ),
    T.Object({ tags: tagListSchema }, { additionalProperties: false }),
  ],
  { description: 'Which devices: a hostname regular expression, or 1 to 3 tags.' },
);

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

/** Tag lists: 1 to 3 unique tags (SPEC.md section 5). */
export function checkTagLimit(tags: string[]): void {
  if (tags.length > 3) throw new Invalid(['tags'], 'at most 3 tags');
}
