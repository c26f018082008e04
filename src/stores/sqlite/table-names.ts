import { MAX_TABLE_NAME_BYTES, quoteIdentifier, validateIdentifier } from '../../core/identifiers.js';

/** Every table of one outbox in a SQLite file, quoted. */
export interface SqliteTableNames {
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
  /** The bookkeeping of applied migrations, shared by every outboxer table of the file (outbox and inbox). */
  readonly migrations: string;
}

export function sqliteTableNames(table = 'outbox'): SqliteTableNames {
  validateIdentifier(table, 'table', MAX_TABLE_NAME_BYTES);
  const q = (suffix: string) => quoteIdentifier(`${table}${suffix}`);
  return Object.freeze({
    table,
    outbox: q(''),
    idempotency: q('_idempotency'),
    relays: q('_relays'),
    partitions: q('_partitions'),
    partitioning: q('_partitioning'),
    pausedTopics: q('_paused_topics'),
    pausedDestinations: q('_paused_destinations'),
    relayTrouble: q('_relay_trouble'),
    migrations: quoteIdentifier('outboxer_migrations'),
  });
}
