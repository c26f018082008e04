import { quoteIdentifier } from '../../../core/identifiers.js';
import type { PgDatabase } from '../database.js';
import { applyMigrations, type Migration, migrationScriptOf } from '../migration-runner.js';
import type { TableName } from '../sql.js';

/** One versioned change of the inbox table. */
export type InboxMigration = Migration;

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

/** The whole inbox DDL as one idempotent script, for DBAs who apply it themselves. */
export function inboxMigrationScript(name: TableName): string {
  return migrationScriptOf('outboxer inbox schema', name, inboxMigrations);
}

/** Applies what is missing in one transaction, under an advisory lock; returns the versions applied. */
export function runInboxMigrations(database: PgDatabase, name: TableName): Promise<number[]> {
  return applyMigrations(database, name, inboxMigrations);
}
