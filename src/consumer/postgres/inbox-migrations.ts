import { quoteIdentifier } from '../../core/identifiers.js';
import type { PgDatabase, SqlExecutor } from '../../stores/postgres/database.js';
import type { TableName } from '../../stores/postgres/sql.js';

export interface InboxMigration {
  readonly version: number;
  readonly description: string;
  readonly sql: (name: TableName) => string;
}

/**
 * Versioned, append-only: a released migration is never edited. Bookkeeping rows live in the schema's
 * `outboxer_migrations` table (shared with the outbox), keyed by this table's name.
 */
export const inboxMigrations: readonly InboxMigration[] = Object.freeze([
  {
    version: 1,
    description: 'inbox table keyed by (consumer, message_id), retention and dead indexes',
    sql: ({ schema, table }) => {
      const t = `${quoteIdentifier(schema)}.${quoteIdentifier(table)}`;
      const index = (suffix: string) => quoteIdentifier(`${table}_${suffix}`);
      return `
CREATE TABLE IF NOT EXISTS ${t} (
  consumer      text NOT NULL CHECK (consumer <> '' AND octet_length(consumer) <= 200),
  message_id    uuid NOT NULL,
  type          text NOT NULL,
  topic         text NOT NULL,
  key           text,
  state         text NOT NULL CHECK (state IN ('processed', 'failed', 'dead')),
  attempts      integer NOT NULL DEFAULT 0,
  last_error    text,
  first_seen_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
  processed_at  timestamptz,
  dead_at       timestamptz,
  PRIMARY KEY (consumer, message_id)
);
CREATE INDEX IF NOT EXISTS ${index('processed_idx')} ON ${t} (processed_at) WHERE state = 'processed';
CREATE INDEX IF NOT EXISTS ${index('dead_idx')} ON ${t} (consumer, dead_at) WHERE state = 'dead';
`;
    },
  },
]);

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

/** The whole inbox DDL as one idempotent script, for DBAs who apply it themselves. */
export function inboxMigrationScript(name: TableName): string {
  const parts = [`-- outboxer inbox schema for ${name.schema}.${name.table}`, 'BEGIN;', bookkeepingSql(name)];
  for (const migration of inboxMigrations) {
    parts.push(`-- version ${migration.version}: ${migration.description}`, migration.sql(name).trim(), recordSql(name, migration.version));
  }
  parts.push('COMMIT;');
  return `${parts.join('\n')}\n`;
}

/** Applies what is missing in one transaction, under an advisory lock; returns the versions applied. */
export async function runInboxMigrations(database: PgDatabase, name: TableName): Promise<number[]> {
  return database.transaction(async (tx: SqlExecutor) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`outboxer:${name.schema}.${name.table}`]);
    await tx.query(bookkeepingSql(name));
    const done = await tx.query(`SELECT version FROM ${quoteIdentifier(name.schema)}.outboxer_migrations WHERE table_name = $1`, [name.table]);
    const applied = new Set(done.rows.map((row) => (row as { version: number }).version));
    const newlyApplied: number[] = [];
    for (const migration of inboxMigrations) {
      if (applied.has(migration.version)) continue;
      await tx.query(migration.sql(name));
      await tx.query(recordSql(name, migration.version));
      newlyApplied.push(migration.version);
    }
    return newlyApplied;
  });
}
