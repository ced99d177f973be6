import { type Static, Type as T } from '@sinclair/typebox';

/** Tags travel in paths: 3 to 255 characters without slash or white space, as device tags are. */
export const tagSchema = T.String({
  minLength: 3,
  maxLength: 255,
  pattern: '^[^/\\s]+$',
  description: 'A device tag.',
});
export const tagListSchema = T.Array(tagSchema, { minItems: 1, maxItems: 3, uniqueItems: true });

/** The bodies of a filter's tag sub-resource: one tag, or the whole list. */
export const tagBody = T.Object({ tag: tagSchema });
export const tagsBody = T.Object({ tags: tagListSchema });

/**
 * Public keys and firewall rules reach devices by a hostname regular expression or by 1 to 3 unique tags. Stored as
 * two nullable columns, exactly one of them set (device-filter.ts).
 */
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
export type DeviceFilter = Static<typeof deviceFilterSchema>;
