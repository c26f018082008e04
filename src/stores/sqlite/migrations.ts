import { quoteIdentifier } from '../../core/identifiers.js';
import { MAX_DESTINATION_BYTES } from '../../core/message-rules.js';
import { MAX_TROUBLE_BYTES } from '../../core/relay-trouble.js';
import { MAX_PAUSE_REASON_BYTES, MAX_PAUSED_TOPIC_BYTES } from '../../core/topic-pause-input.js';
import { destinationMigrationSql, tableContractSql } from './migration-table-contract.js';
import type { SqliteTableNames } from './table-names.js';

/** What a migration's DDL depends on besides the names: fixed when the table is created. */
export interface SqliteSchemaSettings {
  /** The partition count baked into the table's `partition_no` column (1 to 1024). */
  readonly partitionCount: number;
}

export interface SqliteMigration {
  readonly version: number;
  readonly description: string;
  readonly sql: (names: SqliteTableNames, settings: SqliteSchemaSettings) => string;
}

/** A migration with its DDL resolved for one table (outbox or inbox). */
export interface ResolvedSqliteMigration {
  readonly version: number;
  readonly description: string;
  readonly sql: string;
}

/** The database clock as every time is stored: whole milliseconds since the Unix epoch, UTC (any SQLite 3.x). */
export const SQLITE_NOW_MS = `CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)`;

/** The hex of the database clock's ms, 12 digits: the time part of a version 7 UUID. */
const NOW_HEX = `printf('%012x', ${SQLITE_NOW_MS})`;

/** A version 7 UUID (time-ordered, like the library's own ids) in plain SQL, so a plain-SQL producer may leave `id` out. */
const UUID_V7 = `lower(substr(${NOW_HEX}, 1, 8) || '-' || substr(${NOW_HEX}, 9, 4) || '-7' || substr(hex(randomblob(2)), 2) || '-' ||
    substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))`;

/** A media type (`type/subtype[; params]`, printable ASCII), as far as GLOB can say: the library checks it exactly at enqueue. */
const MEDIA_TYPE_GLOB = `content_type GLOB '[A-Za-z0-9]*/[A-Za-z0-9]*' AND content_type NOT GLOB '*[^ -~]*' AND content_type NOT GLOB '* */*'`;
/** `application/json` or a `+json` type, with optional parameters. */
const JSON_TYPE_GLOB = ['application/json', 'application/json;*', 'application/json *', 'application/*+json', 'application/*+json;*', 'application/*+json *']
  .map((pattern) => `lower(content_type) GLOB '${pattern}'`)
  .join(' OR ');

/** Odd weights of the last 16 characters: distinct keys that differ anywhere there spread over the partitions. */
const WEIGHTS = [1, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97];

/**
 * The row's partition from its key (or, unkeyed, its id), with built-in deterministic functions only, so any SQLite
 * (a CLI, another language's driver) computes the same value when it inserts: a weighted sum of the code points
 * of the last 16 characters and the length, modulo the count. Not a cryptographic hash; it only spreads keys.
 */
export function sqlitePartitionExpression(partitionCount: number): string {
  const k = 'COALESCE("key", id)';
  const terms = WEIGHTS.map((w, i) => `COALESCE(unicode(substr(${k}, -${i + 1}, 1)), 0) * ${w}`);
  return `((${terms.join(' + ')} + length(${k}) * 7) % ${partitionCount})`;
}

/**
 * The SQLite schema, version 1 (docs/table.md, "SQLite"). `seq` is `AUTOINCREMENT`: a plain rowid could be handed
 * out again after the newest row is deleted, below a relay's position. Times are whole ms since the epoch.
 */
export const sqliteMigrations: readonly SqliteMigration[] = Object.freeze([
  {
    version: 1,
    description: 'outbox table with partition_no, idempotency keys, relays, partitions, partitioning config, paused topics',
    sql: (n, { partitionCount }) => {
      const index = (suffix: string) => quoteIdentifier(`${n.table}_${suffix}`);
      return `
CREATE TABLE IF NOT EXISTS ${n.outbox} (
  seq           INTEGER PRIMARY KEY AUTOINCREMENT,
  id            TEXT NOT NULL DEFAULT (${UUID_V7}),
  topic         TEXT NOT NULL CHECK (topic <> '' AND length(CAST(topic AS BLOB)) <= 255),
  type          TEXT NOT NULL CHECK (type <> ''),
  "key"         TEXT CHECK ("key" <> ''),
  payload       TEXT CONSTRAINT ${index('payload_json')} CHECK (payload IS NULL OR json_valid(payload)),
  payload_bytes BLOB,
  content_type  TEXT NOT NULL DEFAULT 'application/json',
  headers       TEXT NOT NULL DEFAULT '{}' CONSTRAINT ${index('headers_object_of_strings')} CHECK (json_valid(headers) AND json_type(headers) = 'object'),
  state         TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'published', 'dead')),
  created_at    INTEGER NOT NULL DEFAULT (${SQLITE_NOW_MS}),
  due_at        INTEGER,
  attempts      INTEGER NOT NULL DEFAULT 0,
  last_error    TEXT,
  published_at  INTEGER,
  dead_at       INTEGER,
  partition_no  INTEGER GENERATED ALWAYS AS ${sqlitePartitionExpression(partitionCount)} STORED,
  CONSTRAINT ${index('one_body')} CHECK ((payload IS NULL) <> (payload_bytes IS NULL)),
  CONSTRAINT ${index('content_type_valid')} CHECK (content_type = 'application/json' OR (
    length(CAST(content_type AS BLOB)) <= 255 AND ${MEDIA_TYPE_GLOB} AND (payload IS NULL OR ${JSON_TYPE_GLOB})))
);
CREATE TRIGGER IF NOT EXISTS ${index('headers_are_strings')} BEFORE INSERT ON ${n.outbox}
  WHEN NEW.headers <> '{}' AND json_valid(NEW.headers) AND EXISTS (SELECT 1 FROM json_each(NEW.headers) WHERE type <> 'text')
BEGIN
  SELECT RAISE(ABORT, 'outbox headers must be a JSON object of string values');
END;
CREATE UNIQUE INDEX IF NOT EXISTS ${index('id_key')} ON ${n.outbox} (id);
CREATE INDEX IF NOT EXISTS ${index('fresh_idx')} ON ${n.outbox} (partition_no, seq) WHERE state = 'pending' AND due_at IS NULL;
CREATE INDEX IF NOT EXISTS ${index('due_idx')} ON ${n.outbox} (partition_no, due_at, seq) WHERE state = 'pending' AND due_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS ${index('due_key_idx')} ON ${n.outbox} ("key", seq) WHERE state = 'pending' AND due_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS ${index('pending_idx')} ON ${n.outbox} (seq) WHERE state = 'pending';
CREATE INDEX IF NOT EXISTS ${index('dead_idx')} ON ${n.outbox} (dead_at, seq) WHERE state = 'dead';
CREATE INDEX IF NOT EXISTS ${index('published_idx')} ON ${n.outbox} (published_at) WHERE state = 'published';

CREATE TABLE IF NOT EXISTS ${n.idempotency} (
  idempotency_key TEXT PRIMARY KEY,
  message_id      TEXT NOT NULL,
  created_at      INTEGER NOT NULL DEFAULT (${SQLITE_NOW_MS})
);
CREATE INDEX IF NOT EXISTS ${index('idempotency_created_idx')} ON ${n.idempotency} (created_at);

CREATE TABLE IF NOT EXISTS ${n.partitioning} (
  singleton       INTEGER PRIMARY KEY CHECK (singleton = 1),
  engine          TEXT NOT NULL DEFAULT 'v2' CHECK (engine IN ('v1', 'v2')),
  partition_count INTEGER NOT NULL DEFAULT ${partitionCount} CHECK (partition_count BETWEEN 1 AND 1024),
  generation      INTEGER NOT NULL DEFAULT 1 CHECK (generation >= 1),
  fence_until     INTEGER NOT NULL DEFAULT 0,
  resize_to       INTEGER CHECK (resize_to BETWEEN 1 AND 1024)
);
INSERT OR IGNORE INTO ${n.partitioning} (singleton) VALUES (1);

CREATE TABLE IF NOT EXISTS ${n.relays} (
  relay_id     TEXT PRIMARY KEY,
  name         TEXT NOT NULL CHECK (length(CAST(name AS BLOB)) BETWEEN 1 AND 200),
  lease_ms     INTEGER NOT NULL CHECK (lease_ms > 0),
  joined_at    INTEGER NOT NULL DEFAULT (${SQLITE_NOW_MS}),
  heartbeat_at INTEGER NOT NULL DEFAULT (${SQLITE_NOW_MS}),
  expires_at   INTEGER NOT NULL,
  leaving      INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS ${n.partitions} (
  partition_no INTEGER PRIMARY KEY CHECK (partition_no >= 0),
  generation   INTEGER NOT NULL,
  owner        TEXT,
  state        TEXT NOT NULL DEFAULT 'free' CHECK (state IN ('free', 'owned', 'draining')),
  epoch        INTEGER NOT NULL DEFAULT 0,
  granted_at   INTEGER,
  unclean      INTEGER NOT NULL DEFAULT 0,
  CHECK ((owner IS NULL) = (state = 'free'))
);
CREATE INDEX IF NOT EXISTS ${index('partitions_owner_idx')} ON ${n.partitions} (owner);
WITH RECURSIVE p(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM p WHERE n + 1 < (SELECT partition_count FROM ${n.partitioning}))
INSERT OR IGNORE INTO ${n.partitions} (partition_no, generation) SELECT n, (SELECT generation FROM ${n.partitioning}) FROM p;

CREATE TABLE IF NOT EXISTS ${n.pausedTopics} (
  topic     TEXT PRIMARY KEY CHECK (topic <> '' AND length(CAST(topic AS BLOB)) <= ${MAX_PAUSED_TOPIC_BYTES}),
  reason    TEXT NOT NULL DEFAULT '' CHECK (length(CAST(reason AS BLOB)) <= ${MAX_PAUSE_REASON_BYTES}),
  paused_at INTEGER NOT NULL DEFAULT (${SQLITE_NOW_MS})
);
`;
    },
  },
  {
    version: 2,
    description:
      'the table contract at INSERT: the id, topic, type, key and header rules of the library, refused in its words by triggers (rows stored before stay; publishers park them dead)',
    sql: (n) => tableContractSql(n),
  },
  {
    version: 3,
    description: 'broker trouble: <table>_relay_trouble, one row per relay while its broker is unreachable, written with its beats',
    sql: (n) => `
CREATE TABLE IF NOT EXISTS ${n.relayTrouble} (
  relay_id      TEXT PRIMARY KEY,
  trouble       TEXT NOT NULL CHECK (length(CAST(trouble AS BLOB)) BETWEEN 1 AND ${MAX_TROUBLE_BYTES}),
  trouble_since INTEGER NOT NULL
);
`,
  },
  {
    version: 4,
    description: "fan-out, expand only: the nullable destination column (NULL: the relay's own publisher), and the destination rule in the table contract",
    sql: (n) => destinationMigrationSql(n),
  },
  {
    version: 5,
    description:
      'destination pauses, expand only: <table>_paused_destinations, the destinations operators paused as a whole, held by every relay until resumed',
    // CREATE TABLE IF NOT EXISTS: the `outboxer sql` script stays safe to apply twice. GLOB for the destination rule
    // (SQLite has no REGEXP by default): a letter or digit first, no character outside letters, digits, _ and -
    sql: (n) => `
CREATE TABLE IF NOT EXISTS ${n.pausedDestinations} (
  destination TEXT PRIMARY KEY CHECK (destination GLOB '[A-Za-z0-9]*' AND destination NOT GLOB '*[^A-Za-z0-9_-]*' AND length(CAST(destination AS BLOB)) <= ${MAX_DESTINATION_BYTES}),
  reason      TEXT NOT NULL DEFAULT '' CHECK (length(CAST(reason AS BLOB)) <= ${MAX_PAUSE_REASON_BYTES}),
  paused_at   INTEGER NOT NULL DEFAULT (${SQLITE_NOW_MS})
);
`,
  },
  {
    version: 6,
    description:
      'engine v1 leftovers, contract: engine and fence_until leave <table>_partitioning (what only engine v1 and its switch to v2 needed; never used on SQLite); grants open while no resize waits',
    sql: (n, settings) => dropEngineV1ColumnsSql(n, settings),
  },
]);

/**
 * Migration 6 rebuilds the one-row `<t>_partitioning` without `engine` and `fence_until`, as SQLite documents for a
 * change `ALTER TABLE` cannot make (https://www.sqlite.org/lang_altertable.html#otheralter), rather than with
 * `ALTER TABLE … DROP COLUMN`: that needs SQLite 3.35, and the `outboxer sql` script runs in any `sqlite3` from 3.31.
 * The copy names only the columns kept, so it runs the same on a table that has lost the two already: the script
 * applies twice without a guard, and within one transaction (the runner's, the script's) the table is never missing.
 * The table has no index besides its key, no trigger, no view and no foreign key, so there is nothing to re-create.
 */
function dropEngineV1ColumnsSql(n: SqliteTableNames, { partitionCount }: SqliteSchemaSettings): string {
  const rebuilt = quoteIdentifier(`${n.table}_partitioning_rebuilt`);
  return `
DROP TABLE IF EXISTS ${rebuilt};
CREATE TABLE ${rebuilt} (
  singleton       INTEGER PRIMARY KEY CHECK (singleton = 1),
  partition_count INTEGER NOT NULL DEFAULT ${partitionCount} CHECK (partition_count BETWEEN 1 AND 1024),
  generation      INTEGER NOT NULL DEFAULT 1 CHECK (generation >= 1),
  resize_to       INTEGER CHECK (resize_to BETWEEN 1 AND 1024)
);
INSERT INTO ${rebuilt} (singleton, partition_count, generation, resize_to)
  SELECT singleton, partition_count, generation, resize_to FROM ${n.partitioning};
DROP TABLE ${n.partitioning};
ALTER TABLE ${rebuilt} RENAME TO ${n.partitioning};
`;
}

/** The outbox's migrations with their DDL for one table and its partition count. */
export function resolvedSqliteMigrations(names: SqliteTableNames, settings: SqliteSchemaSettings): readonly ResolvedSqliteMigration[] {
  return sqliteMigrations.map((m) => ({ version: m.version, description: m.description, sql: m.sql(names, settings) }));
}

export function sqliteBookkeepingSql(n: Pick<SqliteTableNames, 'migrations'>): string {
  return `CREATE TABLE IF NOT EXISTS ${n.migrations} (
  table_name TEXT NOT NULL,
  version    INTEGER NOT NULL,
  applied_at INTEGER NOT NULL DEFAULT (${SQLITE_NOW_MS}),
  PRIMARY KEY (table_name, version)
);`;
}
