import { quoteIdentifier } from '../../core/identifiers.js';
import type { PgDatabase } from './database.js';
import { applyMigrations, type Migration, migrationScriptOf } from './migration-runner.js';
import type { TableName } from './sql.js';

export type { Migration } from './migration-runner.js';

/**
 * Versioned, append-only. A released migration is never edited: a change is a new version.
 * The table is a public contract: a plain INSERT of (topic, type, payload[, key, headers]) is a valid producer.
 */
export const migrations: readonly Migration[] = Object.freeze([
  {
    version: 1,
    description: 'outbox table, UUIDv7 default, claim and housekeeping indexes',
    sql: ({ schema, table }) => {
      const s = quoteIdentifier(schema);
      const t = `${s}.${quoteIdentifier(table)}`;
      const index = (suffix: string) => quoteIdentifier(`${table}_${suffix}`);
      return `
CREATE OR REPLACE FUNCTION ${s}.outboxer_uuid_v7() RETURNS uuid
LANGUAGE sql VOLATILE AS $fn$
  SELECT encode(
    set_bit(set_bit(
      overlay(uuid_send(gen_random_uuid())
        PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
        FROM 1 FOR 6),
      52, 1), 53, 1), 'hex')::uuid
$fn$;

CREATE TABLE IF NOT EXISTS ${t} (
  seq          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id           uuid NOT NULL DEFAULT ${s}.outboxer_uuid_v7(),
  topic        text NOT NULL CHECK (topic <> '' AND octet_length(topic) <= 255),
  type         text NOT NULL CHECK (type <> ''),
  key          text CHECK (key <> ''),
  payload      jsonb NOT NULL,
  headers      jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(headers) = 'object'),
  state        text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'published', 'dead')),
  created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
  available_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  attempts     integer NOT NULL DEFAULT 0,
  last_error   text,
  lease_owner  text,
  lease_token  uuid,
  lease_until  timestamptz,
  published_at timestamptz,
  dead_at      timestamptz
);
CREATE UNIQUE INDEX IF NOT EXISTS ${index('id_key')} ON ${t} (id);
CREATE INDEX IF NOT EXISTS ${index('pending_idx')} ON ${t} (seq) WHERE state = 'pending';
CREATE INDEX IF NOT EXISTS ${index('pending_key_idx')} ON ${t} (key, seq) WHERE state = 'pending' AND key IS NOT NULL;
CREATE INDEX IF NOT EXISTS ${index('published_idx')} ON ${t} (published_at) WHERE state = 'published';
CREATE INDEX IF NOT EXISTS ${index('dead_idx')} ON ${t} (dead_at, seq) WHERE state = 'dead';
`;
    },
  },
  {
    version: 2,
    description: 'idempotency keys of enqueues, kept for the idempotency window',
    sql: ({ schema, table }) => {
      const keys = `${quoteIdentifier(schema)}.${quoteIdentifier(`${table}_idempotency`)}`;
      return `
CREATE TABLE IF NOT EXISTS ${keys} (
  idempotency_key text PRIMARY KEY,
  message_id      uuid NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS ${quoteIdentifier(`${table}_idempotency_created_idx`)} ON ${keys} (created_at);
`;
    },
  },
  {
    version: 3,
    description: 'fillfactor 70: lease, retry and release updates stay on their page (HOT) and add no index entries',
    sql: ({ schema, table }) => `
ALTER TABLE ${quoteIdentifier(schema)}.${quoteIdentifier(table)} SET (fillfactor = 70);
`,
  },
  {
    version: 4,
    description: 'index of pending unkeyed rows, so a claim finds them behind a long backlog of one key',
    sql: ({ schema, table }) => `
CREATE INDEX IF NOT EXISTS ${quoteIdentifier(`${table}_pending_unkeyed_idx`)}
  ON ${quoteIdentifier(schema)}.${quoteIdentifier(table)} (seq) WHERE state = 'pending' AND key IS NULL;
`,
  },
]);

/** The whole DDL as one idempotent script, for DBAs who apply it themselves (`outboxer sql`). */
export function migrationScript(name: TableName): string {
  return migrationScriptOf('outboxer schema', name, migrations);
}

/** Applies the outbox migrations that are missing; returns the versions applied. */
export function runMigrations(database: PgDatabase, name: TableName): Promise<number[]> {
  return applyMigrations(database, name, migrations);
}
