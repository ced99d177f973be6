import { StoreModel } from '@gatehouse/core';

/** An announcement of the instance's administrators: no tenant owns it, anyone reads it. */
export class AnnouncementRow extends StoreModel {
  static override tableName = 'announcements';
  static override idColumn = 'uuid';

  declare uuid: string;
  declare title: string;
  /** Markdown as written; rendered to safe HTML on the way out (render.ts). */
  declare content: string;
  /** The day it was published; an edit does not move it. */
  declare date: Date;
  declare updated_at: Date;
}

/** That a user has seen an announcement (the console shows a new one once per user). */
export class AnnouncementRead extends StoreModel {
  static override tableName = 'announcement_reads';
  static override idColumn = ['user_id', 'announcement_uuid'];

  declare user_id: string;
  declare announcement_uuid: string;
  declare seen_at: Date;
}
