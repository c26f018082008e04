import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll } from 'vitest';
import { fromPgPool, type PgDatabase } from '../../src/stores/postgres/database.js';
import { fromPglite, pgliteExecutor } from '../../src/stores/postgres/pglite.js';
import { services, uniqueName } from './services.js';

/** A database handle confined to a fresh schema, for conformance suites run over each database. */
export interface SchemaDatabase {
  readonly schema: string;
  readonly database: PgDatabase;
  /** Plain SQL outside any transaction. */
  sql(text: string, params?: unknown[]): Promise<readonly Record<string, unknown>[]>;
  /** Drops the schema (and ends the connections it owns). */
  cleanup(): Promise<void>;
}

/** Real PostgreSQL: its own pool and schema. */
export async function postgresSchema(prefix: string): Promise<SchemaDatabase> {
  const schema = uniqueName(prefix);
  const pool = new pg.Pool({ connectionString: services.postgresUrl, max: 4 });
  return {
    schema,
    database: fromPgPool(pool),
    sql: async (text, params) => (await pool.query(text, params)).rows as Record<string, unknown>[],
    async cleanup() {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}

let sharedPglite: PGlite | undefined;
afterAll(async () => {
  await sharedPglite?.close();
  sharedPglite = undefined;
});

/** PGlite: one embedded database per test file (it is slow to start), a fresh schema per test. */
export async function pgliteSchema(prefix: string): Promise<SchemaDatabase> {
  sharedPglite ??= new PGlite();
  const executor = pgliteExecutor(sharedPglite);
  const schema = uniqueName(prefix);
  return {
    schema,
    database: fromPglite(sharedPglite),
    sql: async (text, params) => (await executor.query(text, params ?? [])).rows as Record<string, unknown>[],
    cleanup: async () => {
      await executor.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    },
  };
}
