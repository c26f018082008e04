import { DESTINATION_PATTERN, MAX_DESTINATION_BYTES } from '../../core/message-rules.js';
import { MAX_TROUBLE_BYTES } from '../../core/relay-trouble.js';
import { MAX_PAUSE_REASON_BYTES, MAX_PAUSED_TOPIC_BYTES } from '../../core/topic-pause-input.js';
import { destinationContractStatements, tableContractStatements } from './migration-table-contract.js';
import { quoteMysql, type MysqlTableNames } from './table-names.js';

/** What a migration's DDL depends on besides the names: fixed when the table is created. */
export interface MysqlSchemaSettings {
  /** The partition count baked into the table's `partition_no` column (1 to 1024). */
  readonly partitionCount: number;
}

/** One versioned, append-only schema change (each statement on its own: MySQL commits DDL at once). */
export interface MysqlMigration {
  readonly version: number;
  readonly description: string;
  readonly statements: (names: MysqlTableNames, settings: MysqlSchemaSettings) => readonly string[];
}

/** A migration with its statements resolved for one table (outbox or inbox). */
export interface ResolvedMysqlMigration {
  readonly version: number;
  readonly description: string;
  readonly statements: readonly string[];
}

const TEXT = 'CHARACTER SET utf8mb4 COLLATE utf8mb4_bin';
const ASCII = 'CHARACTER SET ascii COLLATE ascii_bin';
/** The time part (48-bit ms, hex) of a version 7 UUID, on the server clock. */
const NOW_HEX = "LPAD(HEX(FLOOR(UNIX_TIMESTAMP(NOW(3)) * 1000)), 12, '0')";
/** A version 7 UUID (time-ordered, like the library's own ids) as a column default, so a plain-SQL producer may leave `id` out. */
const UUID_V7 = `LOWER(CONCAT(SUBSTR(${NOW_HEX}, 1, 8), '-', SUBSTR(${NOW_HEX}, 9, 4), '-7', LPAD(HEX(FLOOR(RAND() * 4096)), 3, '0'), '-',
    ELT(1 + FLOOR(RAND() * 4), '8', '9', 'a', 'b'), LPAD(HEX(FLOOR(RAND() * 4096)), 3, '0'), '-',
    LPAD(HEX(FLOOR(RAND() * 16777216)), 6, '0'), LPAD(HEX(FLOOR(RAND() * 16777216)), 6, '0')))`;
/**
 * core/message-body.ts's MEDIA_TYPE and JSON_MEDIA_TYPE without a backslash (a string literal's backslashes depend on
 * sql_mode): `[+]` for `\+`, `/` unescaped. Both MariaDB (PCRE) and MySQL 8 (ICU) read them the same.
 */
const MEDIA_TYPE_REGEXP = '^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*( *;[ -~]*)?$';
const JSON_TYPE_REGEXP = '^application/([a-z0-9!#$&^_.+-]*[+])?json( *;[ -~]*)?$';

/** The database clock every time is written with: UTC, microseconds (times are never bound from the client). */
export const MYSQL_NOW = 'UTC_TIMESTAMP(6)';

/**
 * Written for MariaDB 10.6+ and MySQL 8.0.29+ alike (expression defaults, enforced CHECKs, `SKIP LOCKED`); the
 * table contract is in docs/table.md ("MariaDB and MySQL"). `key` is a reserved word in MySQL: quoted everywhere.
 * `partition_no` is the row's partition, computed by the database from the key (or the id of an unkeyed row),
 * so a plain-SQL producer or a trigger never computes it; the count is fixed when the table is created.
 * `held_key` is the key of a scheduled pending row and NULL otherwise (a virtual column): its index is what
 * PostgreSQL's partial index `<t>_due_key_idx` is, for the read's hold probe (MySQL has no partial indexes).
 */
export const mysqlMigrations: readonly MysqlMigration[] = Object.freeze([
  {
    version: 1,
    description: 'outbox table with partition_no, idempotency keys, relays, partitions, partitioning config, paused topics',
    statements: (n, { partitionCount }) => {
      const index = (suffix: string) => quoteMysql(`${n.table}_${suffix}`);
      return [
        `CREATE TABLE IF NOT EXISTS ${n.outbox} (
  seq           BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  id            VARCHAR(36) ${ASCII} NOT NULL DEFAULT (${UUID_V7}),
  topic         VARCHAR(255) ${TEXT} NOT NULL,
  type          VARCHAR(255) ${TEXT} NOT NULL,
  \`key\`         VARCHAR(512) ${TEXT} NULL,
  payload       LONGTEXT ${TEXT} NULL,
  payload_bytes LONGBLOB NULL,
  content_type  VARCHAR(255) ${TEXT} NOT NULL DEFAULT 'application/json',
  headers       LONGTEXT ${TEXT} NOT NULL DEFAULT ('{}'),
  state         VARCHAR(9) ${ASCII} NOT NULL DEFAULT 'pending',
  created_at    DATETIME(6) NOT NULL DEFAULT (${MYSQL_NOW}),
  due_at        DATETIME(6) NULL,
  attempts      INT NOT NULL DEFAULT 0,
  last_error    TEXT ${TEXT} NULL,
  published_at  DATETIME(6) NULL,
  dead_at       DATETIME(6) NULL,
  partition_no  SMALLINT UNSIGNED GENERATED ALWAYS AS (CRC32(COALESCE(\`key\`, id)) % ${partitionCount}) STORED,
  held_key      VARCHAR(512) ${TEXT} GENERATED ALWAYS AS (IF(state = 'pending' AND due_at IS NOT NULL, \`key\`, NULL)) VIRTUAL,
  UNIQUE KEY ${index('id_key')} (id),
  KEY ${index('read_idx')} (partition_no, state, due_at, seq),
  KEY ${index('held_key_idx')} (held_key, seq),
  KEY ${index('state_idx')} (state, seq),
  KEY ${index('dead_idx')} (state, dead_at, seq),
  KEY ${index('published_idx')} (state, published_at),
  CONSTRAINT ${index('topic_valid')} CHECK (topic <> '' AND LENGTH(topic) <= 255),
  CONSTRAINT ${index('type_valid')} CHECK (type <> ''),
  CONSTRAINT ${index('key_valid')} CHECK (\`key\` IS NULL OR \`key\` <> ''),
  CONSTRAINT ${index('one_body')} CHECK ((payload IS NULL) <> (payload_bytes IS NULL)),
  CONSTRAINT ${index('payload_json')} CHECK (payload IS NULL OR JSON_VALID(payload)),
  CONSTRAINT ${index('headers_object_of_strings')} CHECK (JSON_VALID(headers) AND JSON_TYPE(headers) = 'OBJECT'),
  CONSTRAINT ${index('content_type_valid')} CHECK (content_type = 'application/json' OR (LENGTH(content_type) <= 255
    AND content_type REGEXP '${MEDIA_TYPE_REGEXP}' AND (payload IS NULL OR LOWER(content_type) REGEXP '${JSON_TYPE_REGEXP}'))),
  CONSTRAINT ${index('state_valid')} CHECK (state IN ('pending', 'published', 'dead'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
        // A header value that is not a string cannot be caught by a CHECK (no subqueries there): the trigger turns such
        // headers into text the CHECK refuses, so the insert fails with CONSTRAINT <t>_headers_object_of_strings.
        `CREATE TRIGGER IF NOT EXISTS ${quoteMysql(`${n.table}_headers_are_strings`)} BEFORE INSERT ON ${n.outbox} FOR EACH ROW
  SET NEW.headers = IF(NEW.headers = '{}' OR NOT JSON_VALID(NEW.headers) OR NOT EXISTS (
      SELECT 1 FROM JSON_TABLE(NEW.headers, '$.*' COLUMNS (v JSON PATH '$')) AS h WHERE JSON_TYPE(h.v) <> 'STRING'),
    NEW.headers, 'header values must be strings')`,
        `CREATE TABLE IF NOT EXISTS ${n.idempotency} (
  idempotency_key VARCHAR(512) ${TEXT} NOT NULL PRIMARY KEY,
  message_id      CHAR(36) ${ASCII} NOT NULL,
  created_at      DATETIME(6) NOT NULL DEFAULT (${MYSQL_NOW}),
  KEY ${quoteMysql(`${n.table}_idempotency_created_idx`)} (created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
        `CREATE TABLE IF NOT EXISTS ${n.partitioning} (
  singleton       TINYINT NOT NULL DEFAULT 1 PRIMARY KEY CHECK (singleton = 1),
  engine          VARCHAR(2) ${ASCII} NOT NULL DEFAULT 'v2' CHECK (engine IN ('v1', 'v2')),
  partition_count INT NOT NULL DEFAULT ${partitionCount} CHECK (partition_count BETWEEN 1 AND 1024),
  generation      INT NOT NULL DEFAULT 1 CHECK (generation >= 1),
  fence_until     DATETIME(6) NOT NULL DEFAULT '1970-01-01 00:00:00',
  resize_to       INT NULL CHECK (resize_to BETWEEN 1 AND 1024)
) ENGINE=InnoDB`,
        `INSERT IGNORE INTO ${n.partitioning} (singleton) VALUES (1)`,
        `CREATE TABLE IF NOT EXISTS ${n.relays} (
  relay_id     CHAR(36) ${ASCII} NOT NULL PRIMARY KEY,
  name         VARCHAR(200) ${TEXT} NOT NULL CHECK (LENGTH(name) BETWEEN 1 AND 200),
  lease_ms     INT NOT NULL CHECK (lease_ms > 0),
  joined_at    DATETIME(6) NOT NULL DEFAULT (${MYSQL_NOW}),
  heartbeat_at DATETIME(6) NOT NULL DEFAULT (${MYSQL_NOW}),
  expires_at   DATETIME(6) NOT NULL,
  leaving      TINYINT NOT NULL DEFAULT 0
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
        `CREATE TABLE IF NOT EXISTS ${n.partitions} (
  partition_no INT NOT NULL PRIMARY KEY CHECK (partition_no >= 0),
  generation   INT NOT NULL,
  owner        CHAR(36) ${ASCII} NULL,
  state        VARCHAR(8) ${ASCII} NOT NULL DEFAULT 'free' CHECK (state IN ('free', 'owned', 'draining')),
  epoch        BIGINT NOT NULL DEFAULT 0,
  granted_at   DATETIME(6) NULL,
  unclean      INT NOT NULL DEFAULT 0,
  KEY ${quoteMysql(`${n.table}_partitions_owner_idx`)} (owner),
  CHECK ((owner IS NULL) = (state = 'free'))
) ENGINE=InnoDB`,
        // the partitions of the configured count, generated without a numbers table (0 .. 1023)
        `INSERT IGNORE INTO ${n.partitions} (partition_no, generation)
  SELECT d.n, c.generation FROM ${n.partitioning} c
  JOIN (SELECT a.i + 32 * b.i AS n
        FROM (${digits(32)}) a CROSS JOIN (${digits(32)}) b) d ON d.n < c.partition_count`,
        `CREATE TABLE IF NOT EXISTS ${n.pausedTopics} (
  topic     VARCHAR(255) ${TEXT} NOT NULL PRIMARY KEY CHECK (topic <> '' AND LENGTH(topic) <= ${MAX_PAUSED_TOPIC_BYTES}),
  reason    VARCHAR(500) ${TEXT} NOT NULL DEFAULT '' CHECK (LENGTH(reason) <= ${MAX_PAUSE_REASON_BYTES}),
  paused_at DATETIME(6) NOT NULL DEFAULT (${MYSQL_NOW})
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
      ];
    },
  },
  {
    version: 2,
    description:
      'the table contract at INSERT: the id, topic, type, key and header rules of the library, refused in its words by triggers (rows stored before stay; publishers park them dead)',
    statements: (n) => tableContractStatements(n),
  },
  {
    version: 3,
    description: 'broker trouble: <table>_relay_trouble, one row per relay while its broker is unreachable, written with its beats',
    statements: (n) => [
      `CREATE TABLE IF NOT EXISTS ${n.relayTrouble} (
  relay_id      CHAR(36) ${ASCII} NOT NULL PRIMARY KEY,
  trouble       VARCHAR(${MAX_TROUBLE_BYTES}) ${TEXT} NOT NULL CHECK (LENGTH(trouble) BETWEEN 1 AND ${MAX_TROUBLE_BYTES}),
  trouble_since DATETIME(6) NOT NULL
) ENGINE=InnoDB`,
    ],
  },
  {
    version: 4,
    description: "fan-out, expand only: the nullable destination column (NULL: the relay's own publisher), and the destination rule in the table contract",
    statements: (n) => [...addColumn(n, 'destination', `VARCHAR(${MAX_DESTINATION_BYTES}) ${TEXT} NULL`), ...destinationContractStatements(n)],
  },
  {
    version: 5,
    description:
      'destination pauses, expand only: <table>_paused_destinations, the destinations operators paused as a whole, held by every relay until resumed',
    statements: (n) => [
      // the name as the destination column takes it (the rule's pattern, `(?s)…(?!.)`: `$` would pass a final line feed)
      `CREATE TABLE IF NOT EXISTS ${n.pausedDestinations} (
  destination VARCHAR(${MAX_DESTINATION_BYTES}) ${TEXT} NOT NULL PRIMARY KEY CHECK (destination REGEXP '(?s)${DESTINATION_PATTERN.slice(0, -1)}(?!.)' AND LENGTH(destination) <= ${MAX_DESTINATION_BYTES}),
  reason      VARCHAR(500) ${TEXT} NOT NULL DEFAULT '' CHECK (LENGTH(reason) <= ${MAX_PAUSE_REASON_BYTES}),
  paused_at   DATETIME(6) NOT NULL DEFAULT (${MYSQL_NOW})
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
    ],
  },
  {
    version: 6,
    description:
      'engine v1 leftovers, contract: engine and fence_until leave <table>_partitioning (what only engine v1 and its switch to v2 needed; never used on MariaDB/MySQL); grants open while no resize waits',
    // A CHECK on the dropped column alone goes with it (MariaDB and MySQL alike); fence_until has none.
    statements: (n) => [...dropColumn(n, 'partitioning', 'engine'), ...dropColumn(n, 'partitioning', 'fence_until')],
  },
]);

/** The outbox's migrations with their statements for one table and its partition count. */
export function resolvedMysqlMigrations(names: MysqlTableNames, settings: MysqlSchemaSettings): readonly ResolvedMysqlMigration[] {
  return mysqlMigrations.map((m) => ({ version: m.version, description: m.description, statements: m.statements(names, settings) }));
}

/**
 * `ALTER TABLE … ADD COLUMN` only when the column is missing, so that the `outboxer sql` script applies twice: MySQL
 * has no `ADD COLUMN IF NOT EXISTS` (MariaDB has). A nullable column without a default rewrites no row where the
 * server adds it in place (MariaDB 10.4+, MySQL 8.0.29+).
 */
function addColumn(n: Pick<MysqlTableNames, 'database' | 'table' | 'outbox'>, column: string, definition: string): readonly string[] {
  return ddlWhereColumn(n, n.table, column, false, `ALTER TABLE ${n.outbox} ADD COLUMN ${quoteMysql(column)} ${definition}`);
}

/**
 * `ALTER TABLE … DROP COLUMN` of a side table only when the column is there, so that the `outboxer sql` script
 * applies twice: MySQL has no `DROP COLUMN IF EXISTS` (MariaDB has). Both drop a column in place, without a table
 * copy (MariaDB 10.4+, MySQL 8.0.29+).
 */
function dropColumn(n: MysqlTableNames, table: 'partitioning', column: string): readonly string[] {
  return ddlWhereColumn(n, `${n.table}_${table}`, column, true, `ALTER TABLE ${n[table]} DROP COLUMN ${quoteMysql(column)}`);
}

/**
 * `alter` only when `table` has `column` (`present`) or lacks it: the statement is chosen from `information_schema`
 * and run as a prepared statement (a session variable and a statement name of this connection; the runner keeps
 * one session), as plain SQL cannot branch outside a stored program.
 */
function ddlWhereColumn(n: Pick<MysqlTableNames, 'database'>, table: string, column: string, present: boolean, alter: string): readonly string[] {
  const schema = n.database === null ? 'DATABASE()' : `'${n.database}'`;
  const found = `EXISTS (SELECT 1 FROM information_schema.COLUMNS
    WHERE TABLE_SCHEMA = ${schema} AND TABLE_NAME = '${table}' AND COLUMN_NAME = '${column}')`;
  const run = `'${alter.replaceAll("'", "''")}'`;
  return [
    `SET @outboxer_ddl = IF(${found}, ${present ? `${run}, 'DO 0'` : `'DO 0', ${run}`})`,
    'PREPARE outboxer_ddl FROM @outboxer_ddl',
    'EXECUTE outboxer_ddl',
    'DEALLOCATE PREPARE outboxer_ddl',
  ];
}

/** `SELECT 0 AS i UNION ALL SELECT 1 ... count-1`: a tiny derived table of numbers. */
function digits(count: number): string {
  return Array.from({ length: count }, (_, i) => (i === 0 ? 'SELECT 0 AS i' : `SELECT ${i}`)).join(' UNION ALL ');
}

/** The bookkeeping table shared by every outboxer table of a database (outbox and inbox), keyed by table name. */
export function mysqlBookkeepingSql(n: Pick<MysqlTableNames, 'migrations'>): string {
  return `CREATE TABLE IF NOT EXISTS ${n.migrations} (
  table_name VARCHAR(64) ${ASCII} NOT NULL,
  version    INT NOT NULL,
  applied_at DATETIME(6) NOT NULL DEFAULT (${MYSQL_NOW}),
  PRIMARY KEY (table_name, version)
) ENGINE=InnoDB`;
}
