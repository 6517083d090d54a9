import { Migrator } from '@mikro-orm/migrations';
import { defineConfig } from '@mikro-orm/postgresql';
import { migrationsList } from './adapters/persistence/migrations/index.ts';
import { entities } from './adapters/persistence/schemas.ts';

/** Everything but the connection: adapters/persistence/database.ts adds the server or the embedded one. */
export const baseConfig = defineConfig({
  entities,
  extensions: [Migrator],
  migrations: { migrationsList, transactional: true, allOrNothing: true, snapshot: false, silent: true },
  forceUtcTimezone: true,
  discovery: { warnWhenNoEntities: false },
  allowGlobalContext: false,
  debug: false,
});

// The MikroORM CLI reads this default export; it needs DATABASE_URL.
export default defineConfig({ ...baseConfig, clientUrl: process.env.DATABASE_URL });
