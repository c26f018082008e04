import { validateIdentifier } from '../../core/identifiers.js';

/** Every table of one outbox on MariaDB/MySQL, quoted (and qualified by database when one was given). */
export interface MysqlTableNames {
  /** The database the tables live in; `null`: the connection's current database. */
  readonly database: string | null;
  /** The outbox table's own name, unquoted. */
  readonly table: string;
  readonly outbox: string;
  readonly idempotency: string;
  readonly relays: string;
  readonly partitions: string;
  readonly partitioning: string;
  readonly pausedTopics: string;
  /** The destinations operators paused as a whole (migration 5). */
  readonly pausedDestinations: string;
  /** Each relay's broker trouble, one row while it lasts (docs/design/lease-protocol.md, "Hand-over and broker trouble"). */
  readonly relayTrouble: string;
  /** The bookkeeping of applied migrations, shared by every outboxer table of the database (outbox and inbox). */
  readonly migrations: string;
  /** The `GET_LOCK` name migrations of this database take (at most 64 characters). */
  readonly migrationLock: string;
}

/** Leaves room for the longest derived name (the constraint `<table>_headers_object_of_strings`) within MySQL's 64 characters. */
const MAX_TABLE_BYTES = 38;

/** Backtick-quoted identifier, inner backticks doubled (names are validated before, so this never matters in practice). */
export function quoteMysql(name: string): string {
  return `\`${name.replaceAll('`', '``')}\``;
}

export function mysqlTableNames(table = 'outbox', database: string | null = null): MysqlTableNames {
  validateIdentifier(table, 'table', MAX_TABLE_BYTES);
  if (database !== null) validateIdentifier(database, 'database', 64);
  const q = (name: string) => (database === null ? quoteMysql(name) : `${quoteMysql(database)}.${quoteMysql(name)}`);
  return Object.freeze({
    database,
    table,
    outbox: q(table),
    idempotency: q(`${table}_idempotency`),
    relays: q(`${table}_relays`),
    partitions: q(`${table}_partitions`),
    partitioning: q(`${table}_partitioning`),
    pausedTopics: q(`${table}_paused_topics`),
    pausedDestinations: q(`${table}_paused_destinations`),
    relayTrouble: q(`${table}_relay_trouble`),
    migrations: q('outboxer_migrations'),
    migrationLock: `outboxer:migrate:${database ?? ''}`.slice(0, 64),
  });
}

export { checkPartitionCount, DEFAULT_PARTITION_COUNT } from '../shared/partition-count.js';
