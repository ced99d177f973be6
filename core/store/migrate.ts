import { readdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Knex } from 'knex';
import { repoRoot } from '../config/load';

/** What a migration file exports. */
export interface MigrationModule {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/** The store's state before boot: an explicit first-run / needs-migration / ready machine (STYLE.md, Ghost). */
export type StoreState =
  | { kind: 'first-run'; pending: string[] }
  | { kind: 'needs-migration'; pending: string[] }
  | { kind: 'ready' };

const TABLE = 'gatehouse_migrations';

/** Migration folders of the given owners (core first, then each plugin), named `<owner>/<file>`. */
export function migrationFiles(owners: string[]): { name: string; file: string }[] {
  const out: { name: string; file: string }[] = [];
  for (const owner of owners) {
    const dir = path.join(repoRoot, 'migrations', owner);
    let files: string[] = [];
    try {
      files = readdirSync(dir).filter((f) => /^\d.*\.ts$/.test(f) && !f.endsWith('.d.ts'));
    } catch {
      continue;
    }
    for (const f of files.sort())
      out.push({ name: `${owner}/${f.replace(/\.ts$/, '')}`, file: path.join(dir, f) });
  }
  return out;
}

/** A knex migration source over the owners' folders, in owner order then file order. */
export class OwnerMigrationSource implements Knex.MigrationSource<{ name: string; file: string }> {
  constructor(private readonly owners: string[]) {}
  async getMigrations() {
    return migrationFiles(this.owners);
  }
  getMigrationName(m: { name: string }) {
    return m.name;
  }
  async getMigration(m: { file: string }): Promise<Knex.Migration> {
    return (await import(pathToFileURL(m.file).href)) as MigrationModule;
  }
}

function config(owners: string[]): Knex.MigratorConfig {
  return {
    migrationSource: new OwnerMigrationSource(owners),
    tableName: TABLE,
    disableMigrationsListValidation: true,
  };
}

export async function storeState(db: Knex, owners: string[]): Promise<StoreState> {
  const exists = await db.schema.hasTable(TABLE);
  const [, pending] = (await db.migrate.list(config(owners))) as [unknown[], { name: string }[]];
  const names = pending.map((p) => p.name);
  if (!exists) return { kind: 'first-run', pending: names };
  return names.length ? { kind: 'needs-migration', pending: names } : { kind: 'ready' };
}

/** Applies pending migrations of the owners; returns the names applied. Runs under knex's migration lock. */
export async function migrateLatest(db: Knex, owners: string[]): Promise<string[]> {
  const [, applied] = (await db.migrate.latest(config(owners))) as [number, string[]];
  return applied;
}

/** Rolls back every migration of the owners (used by the migration tests and `gatehouse migrate --down`). */
export async function migrateDownAll(db: Knex, owners: string[]): Promise<void> {
  await db.migrate.rollback(config(owners), true);
}
