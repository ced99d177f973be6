import type { Knex } from 'knex';

/**
 * Recording retention: a namespace may keep recordings for a number of days (`settings.recording_retention_days`;
 * absent or 0 keeps them). A recording removed for its age leaves its trace on the session: when it was removed and
 * why, so a session never loses its recording without saying so. The partial index finds the recorded sessions
 * that still hold their recording, oldest first, without reading the others.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sessions', (t) => {
    t.timestamp('recording_removed_at', { useTz: true }).nullable();
    t.string('recording_removed_reason', 16).nullable();
  });
  await knex.raw(
    `alter table sessions add constraint sessions_recording_removed_reason_check
       check (recording_removed_reason in ('retention'))`,
  );
  await knex.raw(
    `create index sessions_recording_kept_idx on sessions (tenant_id, started_at)
       where recorded and recording_removed_at is null`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists sessions_recording_kept_idx');
  await knex.raw('alter table sessions drop constraint sessions_recording_removed_reason_check');
  await knex.schema.alterTable('sessions', (t) => {
    t.dropColumn('recording_removed_reason');
    t.dropColumn('recording_removed_at');
  });
}
