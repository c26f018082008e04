import { quoteIdentifier } from '../../core/identifiers.js';
import type { PgDatabase, SqlExecutor } from './database.js';
import type { TableName } from './sql.js';

/** One versioned, append-only schema change: a released migration is never edited. */
export interface Migration {
  readonly version: number;
  readonly description: string;
  readonly sql: (name: TableName) => string;
}

/** Bookkeeping shared by every outboxer table in a schema, keyed by table name. */
function bookkeepingSql({ schema }: TableName): string {
  return `CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(schema)};
CREATE TABLE IF NOT EXISTS ${quoteIdentifier(schema)}.outboxer_migrations (
  table_name text NOT NULL,
  version    integer NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (table_name, version)
);`;
}

function recordSql(name: TableName, version: number): string {
  return `INSERT INTO ${quoteIdentifier(name.schema)}.outboxer_migrations (table_name, version)
VALUES ('${name.table}', ${version}) ON CONFLICT DO NOTHING;`;
}

/** Every migration as one idempotent script, for DBAs who apply it themselves. */
export function migrationScriptOf(title: string, name: TableName, list: readonly Migration[]): string {
  const parts = [`-- ${title} for ${name.schema}.${name.table}`, 'BEGIN;', bookkeepingSql(name)];
  for (const migration of list) {
    parts.push(`-- version ${migration.version}: ${migration.description}`, migration.sql(name).trim(), recordSql(name, migration.version));
  }
  parts.push('COMMIT;');
  return `${parts.join('\n')}\n`;
}

/**
 * Applies what is missing, in one transaction, under an advisory lock of the schema so that several
 * processes starting together (an outbox and an inbox among them) migrate once. Returns the versions applied.
 */
export async function applyMigrations(database: PgDatabase, name: TableName, list: readonly Migration[]): Promise<number[]> {
  return database.transaction(async (tx: SqlExecutor) => {
    // one lock per schema, not per table: the outbox's and the inbox's migrations share outboxer_migrations
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`outboxer:${name.schema}`]);
    await tx.query(bookkeepingSql(name));
    const done = await tx.query(`SELECT version FROM ${quoteIdentifier(name.schema)}.outboxer_migrations WHERE table_name = $1`, [name.table]);
    const applied = new Set(done.rows.map((row) => (row as { version: number }).version));
    const newlyApplied: number[] = [];
    for (const migration of list) {
      if (applied.has(migration.version)) continue;
      await tx.query(migration.sql(name));
      await tx.query(recordSql(name, migration.version));
      newlyApplied.push(migration.version);
    }
    return newlyApplied;
  });
}
