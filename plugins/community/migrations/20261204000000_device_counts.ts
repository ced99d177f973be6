import type { Knex } from 'knex';

/**
 * The device list's first page without scanning the namespace.
 *
 * - `device_counts` keeps, per namespace and kind, how many devices are in each status. A trigger on `devices`
 *   changes it in the same transaction as the row, so the list's `X-Total-Count` stays exact
 *   and costs one primary-key read instead of a count over every row of the namespace. One row per namespace and
 *   kind (not per status): a status change updates a single row, so two changes in one namespace lock nothing in
 *   opposite orders.
 * - `devices_recent_idx` holds the default order (`last_seen`, newest first) per namespace, kind and status, so the
 *   first page is an index scan of one page's rows instead of a top-N sort of the whole namespace. It replaces
 *   `devices_list_idx`, its prefix. The price: `last_seen` is now indexed, so the availability call's rewrite of it
 *   is no longer a heap-only update (bench/RESULTS.md, "Device list of a namespace with 100,000 devices").
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table device_counts (
      tenant_id uuid not null references namespaces (tenant_id) on delete cascade,
      kind varchar(16) not null,
      accepted integer not null default 0,
      pending integer not null default 0,
      rejected integer not null default 0,
      removed integer not null default 0,
      unused integer not null default 0,
      primary key (tenant_id, kind)
    )`);
  // Inserts and deletes are counted per statement, from the statement's rows (transition tables): a bulk insert
  // (a connector's first sync, a restore) writes each namespace's row once, not once per device.
  const grouped = (rows: string) => `
    select tenant_id, kind,
      count(*) filter (where status = 'accepted') as accepted, count(*) filter (where status = 'pending') as pending,
      count(*) filter (where status = 'rejected') as rejected, count(*) filter (where status = 'removed') as removed,
      count(*) filter (where status = 'unused') as unused
    from ${rows} group by tenant_id, kind order by tenant_id, kind`;
  /** Adds the counts `rows` gives (tenant_id, kind, then one per status) to their namespaces' rows. */
  const addCounts = (rows: string) => `
      insert into device_counts as c (tenant_id, kind, accepted, pending, rejected, removed, unused)
      ${rows}
      on conflict (tenant_id, kind) do update set
        accepted = c.accepted + excluded.accepted, pending = c.pending + excluded.pending,
        rejected = c.rejected + excluded.rejected, removed = c.removed + excluded.removed,
        unused = c.unused + excluded.unused`;
  await knex.raw(`
    create function device_counts_add() returns trigger language plpgsql as $$
    begin
      ${addCounts(grouped('added'))};
      return null;
    end $$`);
  // Only updates: a namespace being deleted has already lost its row.
  await knex.raw(`
    create function device_counts_subtract() returns trigger language plpgsql as $$
    begin
      update device_counts c set
        accepted = c.accepted - g.accepted, pending = c.pending - g.pending, rejected = c.rejected - g.rejected,
        removed = c.removed - g.removed, unused = c.unused - g.unused
      from (${grouped('gone')}) g
      where c.tenant_id = g.tenant_id and c.kind = g.kind;
      return null;
    end $$`);
  // A status change moves one device between two columns of one row. Per row, since PostgreSQL gives transition
  // tables to no trigger with a column list, and without the list the availability call (an UPDATE of every
  // known device every 30 s) would run the trigger too; the WHEN skips it unless status, kind or tenant changed.
  await knex.raw(`
    create function device_counts_move() returns trigger language plpgsql as $$
    begin
      update device_counts set
        accepted = accepted - (old.status = 'accepted')::int,
        pending = pending - (old.status = 'pending')::int,
        rejected = rejected - (old.status = 'rejected')::int,
        removed = removed - (old.status = 'removed')::int,
        unused = unused - (old.status = 'unused')::int
      where tenant_id = old.tenant_id and kind = old.kind;
      ${addCounts(`values (new.tenant_id, new.kind, (new.status = 'accepted')::int, (new.status = 'pending')::int,
              (new.status = 'rejected')::int, (new.status = 'removed')::int, (new.status = 'unused')::int)`)};
      return null;
    end $$`);
  await knex.raw(`
    create trigger device_counts_insert after insert on devices
      referencing new table as added for each statement execute function device_counts_add()`);
  await knex.raw(`
    create trigger device_counts_delete after delete on devices
      referencing old table as gone for each statement execute function device_counts_subtract()`);
  await knex.raw(`
    create trigger device_counts_update after update of status, kind, tenant_id on devices
      for each row
      when (old.status is distinct from new.status or old.kind is distinct from new.kind
            or old.tenant_id is distinct from new.tenant_id)
      execute function device_counts_move()`);
  await knex.raw(addCounts(grouped('devices')));
  await knex.raw(
    'create index devices_recent_idx on devices (tenant_id, kind, status, last_seen desc nulls last)',
  );
  await knex.raw('drop index if exists devices_list_idx');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('create index if not exists devices_list_idx on devices (tenant_id, kind, status)');
  await knex.raw('drop index if exists devices_recent_idx');
  await knex.raw('drop trigger if exists device_counts_update on devices');
  await knex.raw('drop trigger if exists device_counts_delete on devices');
  await knex.raw('drop trigger if exists device_counts_insert on devices');
  for (const fn of ['device_counts_add', 'device_counts_subtract', 'device_counts_move'])
    await knex.raw(`drop function if exists ${fn}()`);
  await knex.raw('drop table if exists device_counts');
}
