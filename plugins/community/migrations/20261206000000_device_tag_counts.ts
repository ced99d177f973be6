import type { Knex } from 'knex';

/**
 * The device list filtered by a tag, and sorted by name, without reading every device of the namespace.
 *
 * - `device_tag_counts` keeps, per namespace, kind, status and tag, how many devices carry the tag, the way
 *   `device_counts` keeps the totals (migration 20261204000000): triggers change it in the same transaction as the
 *   device, so a list filtered by one tag answers its exact `X-Total-Count` from one row instead of counting every
 *   matching device (half the namespace, in the benchmark: a 30 ms parallel scan).
 * - Every trigger that changes it first holds the namespace's `device_counts` row, as a status change already does:
 *   two statements changing tags in one namespace then queue on that row instead of locking tag rows in opposite
 *   orders (a deadlock). Its rows belong to that row (the foreign key), not to `namespaces` directly: a new tag's
 *   row then checks a row this transaction already holds, instead of taking a share lock on the namespace, which
 *   accepting a device and renaming a tag hold FOR UPDATE while they change devices (another deadlock).
 * - A count that falls to zero is deleted, so the table holds only tags in use.
 * - `devices_name_idx` holds the name order per namespace, kind and status, so a first page sorted by name reads
 *   the index until it has a page of matching rows instead of sorting all of them. `nulls first` is the order the
 *   list asks for ascending (core/http/list.ts); descending is the same index read backwards.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table device_tag_counts (
      tenant_id uuid not null,
      kind varchar(16) not null,
      status varchar(16) not null,
      tag text not null,
      n integer not null default 0,
      primary key (tenant_id, kind, status, tag),
      foreign key (tenant_id, kind) references device_counts (tenant_id, kind) on delete cascade
    )`);
  // Each device counts once per tag, however often its array names the tag (and a NULL element is no tag).
  const perTag = (rows: string) => `
    select r.tenant_id, r.kind, r.status, t.tag, count(*) as n
    from ${rows} r cross join lateral (select distinct u.tag from unnest(r.tags) as u (tag) where u.tag is not null) t
    group by r.tenant_id, r.kind, r.status, t.tag
    order by r.tenant_id, r.kind, r.status, t.tag`;
  const addTags = (rows: string) => `
    insert into device_tag_counts as c (tenant_id, kind, status, tag, n)
    ${rows}
    on conflict (tenant_id, kind, status, tag) do update set n = c.n + excluded.n`;
  const holdNamespaces = (rows: string) => `
    perform 1 from device_counts c
    where (c.tenant_id, c.kind) in (select distinct tenant_id, kind from ${rows})
    order by c.tenant_id, c.kind for update`;
  await knex.raw(`
    create function device_tag_counts_add() returns trigger language plpgsql as $$
    begin
      ${holdNamespaces('added')};
      ${addTags(perTag('added'))};
      return null;
    end $$`);
  await knex.raw(`
    create function device_tag_counts_subtract() returns trigger language plpgsql as $$
    begin
      ${holdNamespaces('gone')};
      update device_tag_counts c set n = c.n - g.n
      from (${perTag('gone')}) g
      where c.tenant_id = g.tenant_id and c.kind = g.kind and c.status = g.status and c.tag = g.tag;
      delete from device_tag_counts c
      where c.n = 0 and (c.tenant_id, c.kind) in (select distinct tenant_id, kind from gone);
      return null;
    end $$`);
  // Per row, with a WHEN, for the reason device_counts_move is: the availability call updates every known device
  // every 30 s and must not run it.
  await knex.raw(`
    create function device_tag_counts_move() returns trigger language plpgsql as $$
    begin
      perform 1 from device_counts c
      where (c.tenant_id, c.kind) in ((old.tenant_id, old.kind), (new.tenant_id, new.kind))
      order by c.tenant_id, c.kind for update;
      update device_tag_counts set n = n - 1
      where tenant_id = old.tenant_id and kind = old.kind and status = old.status and tag = any (old.tags);
      delete from device_tag_counts
      where tenant_id = old.tenant_id and kind = old.kind and status = old.status and tag = any (old.tags)
        and n = 0;
      ${addTags(`select new.tenant_id, new.kind, new.status, t.tag, 1
                 from (select distinct u.tag from unnest(new.tags) as u (tag) where u.tag is not null) t
                 order by t.tag`)};
      return null;
    end $$`);
  // Trigger names sort after device_counts_*: PostgreSQL fires a table's triggers in name order, so the counts'
  // own row is held first there too.
  await knex.raw(`
    create trigger device_tag_counts_insert after insert on devices
      referencing new table as added for each statement execute function device_tag_counts_add()`);
  await knex.raw(`
    create trigger device_tag_counts_delete after delete on devices
      referencing old table as gone for each statement execute function device_tag_counts_subtract()`);
  await knex.raw(`
    create trigger device_tag_counts_update after update of tags, status, kind, tenant_id on devices
      for each row
      when (old.tags is distinct from new.tags or old.status is distinct from new.status
            or old.kind is distinct from new.kind or old.tenant_id is distinct from new.tenant_id)
      execute function device_tag_counts_move()`);
  await knex.raw(addTags(perTag('devices')));
  await knex.raw('create index devices_name_idx on devices (tenant_id, kind, status, name nulls first)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists devices_name_idx');
  await knex.raw('drop trigger if exists device_tag_counts_update on devices');
  await knex.raw('drop trigger if exists device_tag_counts_delete on devices');
  await knex.raw('drop trigger if exists device_tag_counts_insert on devices');
  for (const fn of ['device_tag_counts_add', 'device_tag_counts_subtract', 'device_tag_counts_move'])
    await knex.raw(`drop function if exists ${fn}()`);
  await knex.raw('drop table if exists device_tag_counts');
}
