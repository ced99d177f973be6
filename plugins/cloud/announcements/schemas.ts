import { type Static, Type as T } from '@sinclair/typebox';

/** An announcement in short, as the list answers it. */
export const announcementSummary = T.Object({
  uuid: T.String({ format: 'uuid' }),
  title: T.String(),
  date: T.String({ format: 'date-time' }),
});
export type AnnouncementSummary = Static<typeof announcementSummary>;
/** An announcement in full: the Markdown as written, and as safe HTML. */
export const announcement = T.Object({
  uuid: T.String({ format: 'uuid' }),
  title: T.String(),
  content: T.String({ description: 'Markdown, as written' }),
  html: T.String({ description: 'the content as sanitised HTML, safe to show' }),
  date: T.String({ format: 'date-time' }),
});
export type Announcement = Static<typeof announcement>;
