import { quoteIdentifier } from '../../../core/identifiers.js';
import type { SqliteDatabase } from '../database.js';
import { applySqliteMigrations, sqliteMigrationScript } from '../migration-runner.js';
import { type ResolvedSqliteMigration, SQLITE_NOW_MS } from '../migrations.js';
import type { SqliteTableNames } from '../table-names.js';

/** One versioned change of the inbox table on SQLite. */
export interface SqliteInboxMigration {
  readonly version: number;
  readonly description: string;
  readonly sql: (names: SqliteInboxTableNames) => string;
}

/** The inbox table's names: `inbox` quoted, `table` its own name, plus the shared bookkeeping. */
export interface SqliteInboxTableNames extends Pick<SqliteTableNames, 'migrations' | 'table'> {
  readonly inbox: string;
}

/**
 * Versioned, append-only: a released migration is never edited. Bookkeeping rows live in the file's
 * `outboxer_migrations` table (shared with the outbox), keyed by this table's name. Times are whole ms since the epoch.
 */
export const sqliteInboxMigrations: readonly SqliteInboxMigration[] = Object.freeze([
  {
    version: 1,
    description: 'inbox table keyed by (consumer, message_id), retention and dead indexes',
    sql: (n) => {
      const index = (suffix: string) => quoteIdentifier(`${n.table}_${suffix}`);
      return `
CREATE TABLE IF NOT EXISTS ${n.inbox} (
  consumer      TEXT NOT NULL CHECK (consumer <> '' AND length(CAST(consumer AS BLOB)) <= 200),
  message_id    TEXT NOT NULL,
  type          TEXT NOT NULL,
  topic         TEXT NOT NULL,
  "key"         TEXT,
  state         TEXT NOT NULL CHECK (state IN ('processed', 'failed', 'dead')),
  attempts      INTEGER NOT NULL DEFAULT 0,
  last_error    TEXT,
  first_seen_at INTEGER NOT NULL DEFAULT (${SQLITE_NOW_MS}),
  updated_at    INTEGER NOT NULL DEFAULT (${SQLITE_NOW_MS}),
  processed_at  INTEGER,
  dead_at       INTEGER,
  PRIMARY KEY (consumer, message_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ${index('processed_idx')} ON ${n.inbox} (processed_at) WHERE state = 'processed';
CREATE INDEX IF NOT EXISTS ${index('dead_idx')} ON ${n.inbox} (consumer, dead_at) WHERE state = 'dead';
`;
    },
  },
]);

function resolved(names: SqliteInboxTableNames): ResolvedSqliteMigration[] {
  return sqliteInboxMigrations.map((m) => ({ version: m.version, description: m.description, sql: m.sql(names) }));
}

/** The whole inbox DDL as one idempotent script for `sqlite3`. */
export function sqliteInboxMigrationScript(names: SqliteInboxTableNames): string {
  return sqliteMigrationScript('outboxer inbox schema', names, names.table, resolved(names));
}

/** Applies what is missing in one `BEGIN IMMEDIATE` transaction; returns the versions applied. */
export function runSqliteInboxMigrations(database: SqliteDatabase, names: SqliteInboxTableNames): Promise<number[]> {
  return applySqliteMigrations(database, names, names.table, resolved(names));
}
