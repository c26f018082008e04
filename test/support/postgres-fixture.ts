import pg from 'pg';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { PostgresOutboxStore, type PostgresStoreOptions } from '../../src/stores/postgres/postgres-store.js';
import { services, uniqueName } from './services.js';

export interface PostgresFixture {
  readonly pool: pg.Pool;
  readonly schema: string;
  readonly store: PostgresOutboxStore;
  /** Drops the schema and ends the pool. */
  cleanup(): Promise<void>;
}

/** A fresh schema with a migrated outbox table, so tests run in parallel and leave no residue. */
export async function createPostgresFixture(options: Omit<PostgresStoreOptions, 'schema'> = {}): Promise<PostgresFixture> {
  const schema = uniqueName('t');
  const pool = new pg.Pool({ connectionString: services.postgresUrl, max: 8 });
  pool.on('error', () => undefined);
  const store = new PostgresOutboxStore(fromPgPool(pool), { ...options, schema });
  await store.migrate();
  return {
    pool,
    schema,
    store,
    async cleanup() {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}
