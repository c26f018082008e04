import { quoteIdentifier } from '../../core/identifiers.js';
import { JSON_MEDIA_TYPE, MEDIA_TYPE } from '../../core/message-body.js';
import type { PgDatabase } from './database.js';
import { applyMigrations, type Migration, migrationScriptOf } from './migration-runner.js';
import { partitionLeasesMigration } from './migration-partition-leases.js';
import { engineSwitchMigration } from './migration-engine-switch.js';
import { dropEngineV1Migration } from './migration-drop-engine-v1.js';
import { readPathIndexes, readPathMigration } from './migration-read-path.js';
import { relayTroubleMigration } from './migration-relay-trouble.js';
import { pausedDestinationsMigration } from './migration-paused-destinations.js';
import { pausedTopicsMigration } from './migration-paused-topics.js';
import { contractTriggerMigration, destinationMigration, tableContractMigration } from './migration-table-contract.js';
import type { TableName } from './sql.js';

export type { Migration } from './migration-runner.js';

/**
 * Versioned, append-only. A released migration is never edited: a change is a new version. (No version has been
 * released yet: migrations 1, 3 and 4 lost what only engine v1 needed when 14 dropped it, so that a new table, or the
 * printed script applied again, never builds what 14 drops; 10 and 12 build the contract's trigger as 15 leaves it.)
 * The table is a public contract (docs/table.md): a plain INSERT of (topic, type, payload[, key, headers]), or of
 * (topic, type, payload_bytes, content_type) for a binary body, is a valid producer.
 */
export const migrations: readonly Migration[] = Object.freeze([
  {
    version: 1,
    description: 'outbox table, UUIDv7 default, pending and housekeeping indexes',
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
  attempts     integer NOT NULL DEFAULT 0,
  last_error   text,
  published_at timestamptz,
  dead_at      timestamptz
);
CREATE UNIQUE INDEX IF NOT EXISTS ${index('id_key')} ON ${t} (id);
CREATE INDEX IF NOT EXISTS ${index('pending_idx')} ON ${t} (seq) WHERE state = 'pending';
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
    description: 'fillfactor 70 for the in-place claims of engine v1 (nothing since migration 14 removed engine v1)',
    // Engine v1's claims updated rows in place; migration 14 resets it, so nothing is set here any more.
    sql: () => '',
  },
  {
    version: 4,
    description: 'an index of pending unkeyed rows for the claims of engine v1 (nothing since migration 14 removed engine v1)',
    // Engine v1's index, which migration 14 drops: a table created since builds nothing here (so that the printed
    // script, applied again, does not build an index only to drop it).
    sql: () => '',
  },
  {
    version: 5,
    description:
      'exact bodies: payload json (kept verbatim, never rewritten like jsonb), payload_bytes for binary bodies, content_type; headers must be an object of strings',
    sql: ({ schema, table }) => {
      const s = quoteIdentifier(schema);
      const t = `${s}.${quoteIdentifier(table)}`;
      const constraint = (suffix: string) => quoteIdentifier(`${table}_${suffix}`);
      return `
CREATE OR REPLACE FUNCTION ${s}.outboxer_check_headers(headers jsonb) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $fn$
DECLARE
  entry record;
BEGIN
  IF jsonb_typeof(headers) IS DISTINCT FROM 'object' THEN
    RAISE EXCEPTION 'outbox headers must be a JSON object of string values; got a JSON %', coalesce(jsonb_typeof(headers), 'null')
      USING ERRCODE = 'check_violation', HINT = 'write {} for no headers, or jsonb_build_object(''name'', value, ...) with text values';
  END IF;
  FOR entry IN SELECT key, jsonb_typeof(value) AS kind FROM jsonb_each(headers) WHERE jsonb_typeof(value) <> 'string' LOOP
    RAISE EXCEPTION 'outbox header "%" must be a string; got a JSON %', left(entry.key, 60), entry.kind
      USING ERRCODE = 'check_violation',
        HINT = 'pass text values (to_jsonb(x::text)); drop unset ones with jsonb_strip_nulls(jsonb_build_object(...))';
  END LOOP;
  RETURN true;
END
$fn$;

DO $do$
BEGIN
  IF EXISTS (SELECT 1 FROM information_schema.columns
             WHERE table_schema = '${schema}' AND table_name = '${table}' AND column_name = 'payload_bytes') THEN
    RETURN;
  END IF;
  -- Rows written by plain SQL before the check existed: a non-string value becomes its JSON text, a null is dropped.
  UPDATE ${t} SET headers = (
      SELECT COALESCE(jsonb_object_agg(e.key, CASE WHEN jsonb_typeof(e.value) = 'string' THEN e.value ELSE to_jsonb(e.value::text) END), '{}'::jsonb)
      FROM jsonb_each(headers) e WHERE jsonb_typeof(e.value) <> 'null')
    WHERE jsonb_typeof(headers) = 'object' AND EXISTS (SELECT 1 FROM jsonb_each(headers) e WHERE jsonb_typeof(e.value) <> 'string');
  ALTER TABLE ${t}
    ALTER COLUMN payload TYPE json USING payload::json,
    ALTER COLUMN payload DROP NOT NULL,
    ADD COLUMN payload_bytes bytea,
    ADD COLUMN content_type text NOT NULL DEFAULT 'application/json',
    ADD CONSTRAINT ${constraint('one_body')} CHECK ((payload IS NULL) <> (payload_bytes IS NULL)),
    -- CHECKs run on every update too (claims, marks): the common values skip the regular expressions and the function call.
    ADD CONSTRAINT ${constraint('content_type_valid')} CHECK (content_type = 'application/json' OR (
      octet_length(content_type) <= 255
      AND content_type ~ '${MEDIA_TYPE.source}'
      AND (payload IS NULL OR content_type ~* '${JSON_MEDIA_TYPE.source}'))),
    ADD CONSTRAINT ${constraint('headers_are_strings')} CHECK (headers = '{}'::jsonb OR ${s}.outboxer_check_headers(headers));
END
$do$;
`;
    },
  },
  {
    version: 6,
    description: 'engine v2, expand only: the partition function, the partitioning config, the relays and partitions side tables',
    sql: partitionLeasesMigration,
  },
  {
    version: 7,
    description:
      'engine v2 read path, expand only: due_at, the xid-first insert trigger, seq CACHE 1; the partition and scheduled-row indexes are built CONCURRENTLY after the transaction',
    sql: readPathMigration,
    indexes: readPathIndexes,
  },
  {
    version: 8,
    description: 'resize, expand only: resize_to in the partitioning row (and what the switch from engine v1 needed, which migration 14 drops)',
    sql: engineSwitchMigration,
  },
  {
    version: 9,
    description: 'operator pauses, expand only: the topics operators paused (<table>_paused_topics), held by every relay until resumed',
    sql: pausedTopicsMigration,
  },
  {
    version: 10,
    description:
      'the table contract at INSERT, expand only: the topic, type, key and header rules of the library, refused in its words by a trigger (rows stored before stay; publishers park them dead)',
    sql: tableContractMigration,
  },
  {
    version: 11,
    description: 'broker trouble, expand only: trouble and trouble_since on the relays rows, written by each relay with its beats',
    sql: relayTroubleMigration,
  },
  {
    version: 12,
    description: "fan-out, expand only: the nullable destination column (NULL: the relay's own publisher), and the destination rule in the table contract",
    sql: destinationMigration,
  },
  {
    version: 13,
    description:
      'destination pauses, expand only: the destinations operators paused as a whole (<table>_paused_destinations), held by every relay until resumed',
    sql: pausedDestinationsMigration,
  },
  {
    version: 14,
    description:
      'engine v1 removed, contract: its fence triggers and function, claim indexes, row lease columns, available_at and fillfactor 70 leave the table; a table still at v1 moves to v2',
    sql: dropEngineV1Migration,
  },
  {
    version: 15,
    description:
      "the table contract's trigger without its WHEN clause, expand only: PostgreSQL compiled that clause again for every INSERT statement; the function alone decides, as it did for every row the clause let in",
    sql: contractTriggerMigration,
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
