import type { Knex } from 'knex';

/**
 * Connectors dial out: a connector process beside the engine holds a token, and the server no longer opens
 * connections to an address a namespace typed. Each connector gets the hash of its token (none for the connectors
 * made before: they wait until someone makes a token for them), and an engine's container belongs to one connector
 * only (`connector_containers.container_id` unique). Where two connectors claimed the same container, the older
 * connector keeps it; the other's container device is removed (accepted ones keep their slot, as removed devices).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('connectors', (t) => {
    t.string('token_hash', 64);
  });
  const waiting =
    'waiting for its connector: Gatehouse no longer connects to engines itself; make a token for this ' +
    'connector and run gatehouse-agent connector beside the engine';
  await knex('connectors').update({ status_state: 'disconnected', status_message: waiting });

  const losers = (await knex('connector_containers as cc')
    .join('connectors as c', 'c.uid', 'cc.connector_uid')
    .whereExists(
      knex('connector_containers as o')
        .join('connectors as oc', 'oc.uid', 'o.connector_uid')
        .whereRaw('o.container_id = cc.container_id and o.device_uid <> cc.device_uid')
        .whereRaw('(oc.created_at, oc.uid) < (c.created_at, c.uid)')
        .select(knex.raw('1')),
    )
    .pluck('cc.device_uid')) as string[];
  if (losers.length) {
    await knex('devices').whereIn('uid', losers).where('status', 'accepted').update({
      status: 'removed',
      status_update_at: knex.fn.now(),
      removed_at: knex.fn.now(),
      connected: false,
    });
    await knex('connector_containers').whereIn('device_uid', losers).delete();
    await knex('devices').whereIn('uid', losers).whereNot('status', 'removed').delete();
  }
  await knex.schema.alterTable('connector_containers', (t) => {
    t.unique(['container_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('connector_containers', (t) => {
    t.dropUnique(['container_id']);
  });
  await knex.schema.alterTable('connectors', (t) => {
    t.dropColumn('token_hash');
  });
}
