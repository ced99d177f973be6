import { loadConfig } from '@gatehouse/server';
import type { Knex } from 'knex';
import { openDatabase } from '../../core/store/db';
import { migrateLatest } from '../../core/store/migrate';
import { communityEditionMigrations } from './migrations';
import { dropDatabase, freshDatabase } from './server';

/** A store for the store suites, migrated, with one user owning one namespace. */
export interface MigratedStore {
  db: Knex;
  /** The fresh PostgreSQL database's URL; undefined on the embedded store (in memory). */
  url: string | undefined;
  /** Closes the store and drops its database. */
  close(): Promise<void>;
}

/**
 * A fresh PostgreSQL database with TEST_DATABASE_URL, else an in-memory PGlite, migrated as the community edition
 * is, with the user `owner` (user name `username`) owning the namespace `tenant` named `username`.
 */
export async function migratedStore(opts: {
  owner: string;
  username: string;
  tenant: string;
  poolMax?: number;
}): Promise<MigratedStore> {
  const url = await freshDatabase();
  const database = opts.poolMax ? { url, poolMax: opts.poolMax } : { url };
  const db = openDatabase(loadConfig({}, { database }), { memory: !url });
  await migrateLatest(db, communityEditionMigrations);
  await db('users').insert({
    id: opts.owner,
    name: opts.username,
    username: opts.username,
    email: `${opts.username}@example.com`,
    password_hash: 'x',
  });
  await db('namespaces').insert({ tenant_id: opts.tenant, name: opts.username, owner: opts.owner });
  return {
    db,
    url,
    close: async () => {
      await db.destroy();
      await dropDatabase(url);
    },
  };
}
