import type { Knex } from 'knex';

/**
 * An agent is a device wherever it runs. The lists used to split on the platform the agent
 * reported, so an agent inside Docker (or any host with /.dockerenv) was filed under `/api/containers`, where the
 * Devices screen never showed it while Home and the device limit counted it. The column that splits the lists is now
 * `kind`: `device` for every agent, `container` only for containers a container-engine connector exposes. The
 * platform stays in `info.platform`, for information.
 *
 * Every existing row was written by an agent, so every existing row becomes a device.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists devices_list_idx');
  await knex.raw('alter table devices rename column platform to kind');
  await knex.raw(`update devices set kind = 'device'`);
  await knex.raw(`alter table devices alter column kind set default 'device'`);
  await knex.raw(
    `alter table devices add constraint devices_kind_check check (kind in ('device', 'container'))`,
  );
  await knex.raw('create index devices_list_idx on devices (tenant_id, kind, status)');
}

/** Back to the platform split: a container row goes back to docker, a device to what its agent reported. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists devices_list_idx');
  await knex.raw('alter table devices drop constraint if exists devices_kind_check');
  await knex.raw('alter table devices rename column kind to platform');
  await knex.raw(
    `update devices set platform = case
       when platform = 'container' then 'docker'
       when info->>'platform' = 'docker' then 'docker'
       else 'native' end`,
  );
  await knex.raw(`alter table devices alter column platform set default 'native'`);
  await knex.raw('create index devices_list_idx on devices (tenant_id, platform, status)');
}
