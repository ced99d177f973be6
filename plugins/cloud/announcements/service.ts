import { randomUUID } from 'node:crypto';
import { NotFound } from '@gatehouse/core';
import type { Knex } from 'knex';
import { AnnouncementRead, AnnouncementRow } from './model';
import { renderAnnouncement } from './render';
import type { Announcement, AnnouncementSummary } from './schemas';

const iso = (d: Date | string) => new Date(d).toISOString();

/** Announcements of the instance's administrators: anyone reads them. */
export class AnnouncementService {
  private readonly db: Knex;

  constructor(deps: { db: Knex }) {
    this.db = deps.db;
  }

  private rows() {
    return AnnouncementRow.bindKnex(this.db).query();
  }

  /** The short form (uuid, title, date) of one page, by date, with the total for X-Total-Count. */
  async list(q: {
    page: number;
    per_page: number;
    order_by: 'asc' | 'desc';
  }): Promise<{ total: number; items: AnnouncementSummary[] }> {
    const total = await this.rows().resultSize();
    const rows = await this.rows()
      .orderBy([
        { column: 'date', order: q.order_by },
        { column: 'uuid', order: q.order_by },
      ])
      .limit(q.per_page)
      .offset((q.page - 1) * q.per_page)
      .select('uuid', 'title', 'date');
    const items = rows.map((r) => ({ uuid: r.uuid, title: r.title, date: iso(r.date) }));
    return { total, items };
  }

  async get(uuid: string): Promise<Announcement> {
    const row = await this.rows().findById(uuid);
    if (!row) throw new NotFound('announcement');
    return this.full(row);
  }

  private full(row: AnnouncementRow): Announcement {
    return {
      uuid: row.uuid,
      title: row.title,
      content: row.content,
      html: renderAnnouncement(row.content),
      date: iso(row.date),
    };
  }

  async publish(input: { title: string; content: string }): Promise<Announcement> {
    const row = await this.rows()
      .insert({ uuid: randomUUID(), title: input.title, content: input.content })
      .returning('*');
    return this.full(row);
  }

  /** Changes the title or content; the date stays the day it was published. */
  async edit(uuid: string, changes: { title?: string; content?: string }): Promise<Announcement> {
    const [row] = await this.rows()
      .where({ uuid })
      .patch({ ...changes, updated_at: new Date() })
      .returning('*');
    if (!row) throw new NotFound('announcement');
    return this.full(row);
  }

  /** Whether `userId` has seen the announcement (the console shows a new one once per user); 404 if it is unknown. */
  async seen(userId: string, uuid: string): Promise<{ seen: boolean }> {
    if (!(await this.rows().findById(uuid).select('uuid'))) throw new NotFound('announcement');
    const read = await AnnouncementRead.bindKnex(this.db).query().findById([userId, uuid]).select('seen_at');
    return { seen: Boolean(read) };
  }

  /** Remembers that `userId` has seen the announcement; saying so again changes nothing. */
  async markSeen(userId: string, uuid: string): Promise<{ seen: boolean }> {
    if (!(await this.rows().findById(uuid).select('uuid'))) throw new NotFound('announcement');
    await AnnouncementRead.bindKnex(this.db)
      .query()
      .insert({ user_id: userId, announcement_uuid: uuid })
      .onConflict(['user_id', 'announcement_uuid'])
      .ignore();
    return { seen: true };
  }

  async withdraw(uuid: string): Promise<void> {
    const n = await this.rows().deleteById(uuid);
    if (!n) throw new NotFound('announcement');
  }
}
