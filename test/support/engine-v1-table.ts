import type pg from 'pg';
import { fromPgPool, type PgDatabase } from '../../src/stores/postgres/database.js';
import { switchEngine } from '../../src/stores/postgres/engine/switch-engine.js';
import type { PostgresStoreOptions } from '../../src/stores/postgres/postgres-store.js';
import type { TableName } from '../../src/stores/postgres/sql.js';
import { createPostgresFixture, type PostgresFixture } from './postgres-fixture.js';

/**
 * Puts a table that `migrate` just created (engine v2) back on engine v1, for tests of v1 behaviour (claims, the
 * hand-off): a v1 relay claims nothing on a v2 table, whose fence turns its claims into no-ops.
 */
export async function useEngineV1(database: PgDatabase | pg.Pool, name: TableName): Promise<void> {
  await switchEngine('query' in database && 'transaction' in database ? database : fromPgPool(database), name, { engine: 'v1' });
}

/** `createPostgresFixture` with its table on engine v1; relays of the test need `engine: 'v1'` too. */
export async function createV1PostgresFixture(options: Omit<PostgresStoreOptions, 'schema'> = {}): Promise<PostgresFixture> {
  const fixture = await createPostgresFixture(options);
  await useEngineV1(fixture.pool, fixture.store.tableName);
  return fixture;
}
