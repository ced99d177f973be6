import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Knex } from 'knex';
import { ConfigError } from '../config/load';
import type { PluginManifest } from '../plugin';

/** Whose migrations, and where they are: `name` prefixes each migration's recorded name. */
export interface MigrationOwner {
  name: string;
  dir: string;
}

/** Core's own migrations (the instance's keys and settings), in core's own folder, applied before any plugin's. */
export const coreMigrations: MigrationOwner = {
  name: 'core',
  dir: fileURLToPath(new URL('../migrations/', import.meta.url)),
};

/** The migrations a manifest registers, or undefined when it has none. */
export function pluginMigrations(
  plugin: Pick<PluginManifest, 'name' | 'migrations'>,
): MigrationOwner | undefined {
  const where = plugin.migrations;
  if (where === undefined) return undefined;
  const dir = where instanceof URL || where.startsWith('file:') ? fileURLToPath(where) : where;
  if (!path.isAbsolute(dir)) {
    throw new ConfigError(
      `plugin ${plugin.name}: migrations must be an absolute directory or a file: URL; got "${dir}"`,
    );
  }
  return { name: plugin.name, dir };
}

/** The migrations of a list of plugins: core's first, then each plugin's directory in list order. */
export function migrationOwners(
  plugins: readonly Pick<PluginManifest, 'name' | 'migrations'>[],
): MigrationOwner[] {
  const owners = [coreMigrations];
  for (const p of plugins) {
    const own = pluginMigrations(p);
    if (own) owners.push(own);
  }
  return owners;
}

/** What a migration file exports. */
export interface MigrationModule {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/** The store's state before boot: an explicit first-run / needs-migration / ready machine. */
export type StoreState =
  | { kind: 'first-run'; pending: string[] }
  | { kind: 'needs-migration'; pending: string[] }
  | { kind: 'ready' };

const TABLE = 'gatehouse_migrations';

/**
 * Migration files of the given owners (core first, then each plugin), named `<owner>/<file without extension>`.
 * TypeScript files run through tsx in a checkout; an outside plugin ships JavaScript.
 */
export function migrationFiles(owners: MigrationOwner[]): { name: string; file: string }[] {
  const out: { name: string; file: string }[] = [];
  for (const owner of owners) {
    if (!existsSync(owner.dir)) {
      throw new ConfigError(`plugin ${owner.name}: its migrations directory ${owner.dir} does not exist`);
    }
    const files = readdirSync(owner.dir).filter((f) => /^\d.*\.(ts|js|mjs)$/.test(f) && !f.endsWith('.d.ts'));
    for (const f of files.sort())
      out.push({ name: `${owner.name}/${f.replace(/\.(ts|js|mjs)$/, '')}`, file: path.join(owner.dir, f) });
  }
  return out;
}

/** A knex migration source over the owners' folders, in owner order then file order. */
export class OwnerMigrationSource implements Knex.MigrationSource<{ name: string; file: string }> {
  constructor(private readonly owners: MigrationOwner[]) {}
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

function config(owners: MigrationOwner[]): Knex.MigratorConfig {
  return {
    migrationSource: new OwnerMigrationSource(owners),
    tableName: TABLE,
    disableMigrationsListValidation: true,
  };
}

export async function storeState(db: Knex, owners: MigrationOwner[]): Promise<StoreState> {
  const exists = await db.schema.hasTable(TABLE);
  const [, pending] = (await db.migrate.list(config(owners))) as [unknown[], { name: string }[]];
  const names = pending.map((p) => p.name);
  if (!exists) return { kind: 'first-run', pending: names };
  return names.length ? { kind: 'needs-migration', pending: names } : { kind: 'ready' };
}

/** Applies pending migrations of the owners; returns the names applied. Runs under knex's migration lock. */
export async function migrateLatest(db: Knex, owners: MigrationOwner[]): Promise<string[]> {
  const [, applied] = (await db.migrate.latest(config(owners))) as [number, string[]];
  return applied;
}

/** Rolls back every migration of the owners (used by the migration tests and `gatehouse migrate --down`). */
export async function migrateDownAll(db: Knex, owners: MigrationOwner[]): Promise<void> {
  await db.migrate.rollback(config(owners), true);
}
