import type { Knex } from 'knex';

/**
 * The device list's first page without scanning the namespace (issue 16).
 *
 * - `device_counts` keeps, per namespace and kind, how many devices are in each status. A trigger on `devices`
 *   changes it in the same transaction as the row, so the list's `X-Total-Count` stays exact (SPEC.md section 5)
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
  // Subtracts the old row's status and adds the new one's; an UPDATE touching neither status, kind nor tenant
  // never calls it (the trigger's WHEN). The decrement only updates: a namespace being deleted has lost its row.
  await knex.raw(`
    create function device_counts_apply() returns trigger language plpgsql as $$
    begin
      if tg_op in ('UPDATE', 'DELETE') then
        update device_counts set
          accepted = accepted - (old.status = 'accepted')::int,
          pending = pending - (old.status = 'pending')::int,
          rejected = rejected - (old.status = 'rejected')::int,
          removed = removed - (old.status = 'removed')::int,
          unused = unused - (old.status = 'unused')::int
        where tenant_id = old.tenant_id and kind = old.kind;
      end if;
      if tg_op in ('INSERT', 'UPDATE') then
        insert into device_counts as c (tenant_id, kind, accepted, pending, rejected, removed, unused)
        values (new.tenant_id, new.kind, (new.status = 'accepted')::int, (new.status = 'pending')::int,
                (new.status = 'rejected')::int, (new.status = 'removed')::int, (new.status = 'unused')::int)
        on conflict (tenant_id, kind) do update set
          accepted = c.accepted + excluded.accepted,
          pending = c.pending + excluded.pending,
          rejected = c.rejected + excluded.rejected,
          removed = c.removed + excluded.removed,
          unused = c.unused + excluded.unused;
      end if;
      return null;
    end $$`);
  await knex.raw(`
    create trigger device_counts_insert after insert on devices
      for each row execute function device_counts_apply()`);
  await knex.raw(`
    create trigger device_counts_delete after delete on devices
      for each row execute function device_counts_apply()`);
  await knex.raw(`
    create trigger device_counts_update after update of status, kind, tenant_id on devices
      for each row
      when (old.status is distinct from new.status or old.kind is distinct from new.kind
            or old.tenant_id is distinct from new.tenant_id)
      execute function device_counts_apply()`);
  await knex.raw(`
    insert into device_counts (tenant_id, kind, accepted, pending, rejected, removed, unused)
    select tenant_id, kind,
      count(*) filter (where status = 'accepted'), count(*) filter (where status = 'pending'),
      count(*) filter (where status = 'rejected'), count(*) filter (where status = 'removed'),
      count(*) filter (where status = 'unused')
    from devices group by tenant_id, kind`);
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
  await knex.raw('drop function if exists device_counts_apply()');
  await knex.raw('drop table if exists device_counts');
}
