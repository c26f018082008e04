import type pg from 'pg';
import { fromPgPool, type PgDatabase } from '../../src/stores/postgres/database.js';
import { switchEngine } from '../../src/stores/postgres/engine/switch-engine.js';
import type { PostgresStoreOptions } from '../../src/stores/postgres/postgres-store.js';
import type { TableName } from '../../src/stores/postgres/sql.js';
import { createPostgresFixture, type PostgresFixture } from './postgres-fixture.js';

/**
 * Puts a table that `migrate` just created (engine v2) back on engine v1, as a table of an earlier version is, for
 * tests of the switch and of relays waiting on such a table (`old-v1-relay.ts` plays the older version's relays).
 */
export async function useEngineV1(database: PgDatabase | pg.Pool, name: TableName): Promise<void> {
  await switchEngine('query' in database && 'transaction' in database ? database : fromPgPool(database), name, { engine: 'v1' });
}

/** `createPostgresFixture` with its table on engine v1. */
export async function createV1PostgresFixture(options: Omit<PostgresStoreOptions, 'schema'> = {}): Promise<PostgresFixture> {
  const fixture = await createPostgresFixture(options);
  await useEngineV1(fixture.pool, fixture.store.tableName);
  return fixture;
}
