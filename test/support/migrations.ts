import { coreMigrations, type MigrationOwner, pluginMigrations } from '@gatehouse/core/store/migrate';
import community from '@gatehouse/plugin-community';

/** The community edition's migrations as its kernel applies them: core's, then the ones its manifest registers. */
export const communityEditionMigrations: MigrationOwner[] = [
  coreMigrations,
  pluginMigrations(community) as MigrationOwner,
];
