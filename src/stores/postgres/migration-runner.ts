import { quoteIdentifier } from '../../core/identifiers.js';
import { buildIndexes, buildIndexesInTransaction } from './concurrent-indexes.js';
import type { PgDatabase, SqlExecutor } from './database.js';
import type { TableName } from './sql.js';

/** One versioned, append-only schema change: a released migration is never edited. */
export interface Migration {
  readonly version: number;
  readonly description: string;
  readonly sql: (name: TableName) => string;
  /**
   * Indexes that scan the whole table to build: a query returning one row per index, `name` (in the table's
   * schema, unquoted) and `definition` (what follows `CREATE INDEX <name>`). `migrate` builds them after its
   * transaction, `CONCURRENTLY`, so writers never wait; the printed script builds them in its transaction.
   */
  readonly indexes?: (name: TableName) => string;
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
    parts.push(`-- version ${migration.version}: ${migration.description}`, migration.sql(name).trim());
    if (migration.indexes !== undefined) parts.push(scriptIndexesSql(migration.indexes(name)));
    parts.push(recordSql(name, migration.version));
  }
  parts.push('COMMIT;');
  return `${parts.join('\n')}\n`;
}

/** The script builds indexes plainly: a DBA applying it to a big table should build them first, concurrently. */
function scriptIndexesSql(indexes: string): string {
  return `-- Built plainly here, inside the script's transaction: writers wait while they build. On a big table, run
-- \`outboxer migrate\` instead (it builds them CONCURRENTLY), or create them CONCURRENTLY beforehand under these names.
DO $indexes$
DECLARE
  wanted record;
BEGIN
  FOR wanted IN ${indexes} LOOP
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I %s', wanted.name, wanted.definition);
  END LOOP;
END
$indexes$;`;
}

/**
 * Applies what is missing, in one transaction, under an advisory lock of the schema so that several
 * processes starting together (an outbox and an inbox among them) migrate once. Returns the versions applied.
 */
export async function applyMigrations(database: PgDatabase, name: TableName, list: readonly Migration[]): Promise<number[]> {
  const applied = await applyInTransaction(database, name, list);
  for (const migration of list) {
    if (migration.indexes !== undefined) await buildIndexes(database, name, migration.indexes(name));
  }
  return applied;
}

function applyInTransaction(database: PgDatabase, name: TableName, list: readonly Migration[]): Promise<number[]> {
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
    // a table created just now is empty: its indexes are built here, without waiting on older snapshots
    if (list[0] !== undefined && newlyApplied.includes(list[0].version)) {
      for (const migration of list) if (migration.indexes !== undefined) await buildIndexesInTransaction(tx, name, migration.indexes(name));
    }
    return newlyApplied;
  });
}

/**
 * The versions of `list` not applied to this table (all of them when the table or the bookkeeping table is
 * missing). Reads only: runs on a relay that may not create anything.
 */
export async function missingMigrations(database: PgDatabase, name: TableName, list: readonly Migration[]): Promise<number[]> {
  const schema = quoteIdentifier(name.schema);
  const found = await database.query('SELECT to_regclass($1) IS NOT NULL AS has_table, to_regclass($2) IS NOT NULL AS has_bookkeeping', [
    `${schema}.${quoteIdentifier(name.table)}`,
    `${schema}.outboxer_migrations`,
  ]);
  const row = found.rows[0] as { has_table: boolean; has_bookkeeping: boolean } | undefined;
  if (row?.has_table !== true || !row.has_bookkeeping) return list.map((m) => m.version);
  const done = await database.query(`SELECT version FROM ${schema}.outboxer_migrations WHERE table_name = $1`, [name.table]);
  const applied = new Set(done.rows.map((r) => (r as { version: number }).version));
  return list.filter((m) => !applied.has(m.version)).map((m) => m.version);
}
