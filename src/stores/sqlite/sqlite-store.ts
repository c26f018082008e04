import { OutboxerError } from '../../core/errors.js';
import type { DeadMessage, NewOutboxMessage } from '../../core/message.js';
import type {
  DestinationFilter,
  DestinationPause,
  OutboxGauges,
  OutboxOperator,
  OutboxSchema,
  OutboxStats,
  OutboxWriter,
  PartitionReader,
  RelayGroup,
  RelayLeases,
  RelayStore,
  TopicLag,
  TopicPause,
} from '../../core/ports.js';
import type { PendingMessage, PendingMessageDetail, PendingQuery } from '../../core/ports/pending-messages.js';
import { resolveSqliteStoreOptions, type SqliteStoreOptions } from './sqlite-store-options.js';
import type { SqliteDatabase } from './database.js';
import { insertSqliteMessages } from './insert-messages.js';
import { proveSqliteTransaction, toSqliteTransaction, type SqliteTransactionInput } from './sqlite-transaction.js';
import { SqliteRelayLeases } from './leases/sqlite-relay-leases.js';
import { applySqliteMigrations, missingSqliteMigrations, sqliteMigrationScript } from './migration-runner.js';
import { resolvedSqliteMigrations, type ResolvedSqliteMigration, SQLITE_NOW_MS } from './migrations.js';
import type { SqliteTableNames } from './table-names.js';
import { listDeadMessages, purgeDeadMessages, retryDeadMessages } from './operator/sqlite-dead-messages.js';
import { deleteSqlitePending, inspectSqlitePending, listSqlitePending } from './operator/sqlite-pending-messages.js';
import { readSqliteGauges } from './operator/sqlite-gauges.js';
import { listPausedDestinations, pauseSqliteDestination, resumeSqliteDestination } from './operator/paused-destinations.js';
import { listPausedTopics, pauseSqliteTopic, resumeSqliteTopic } from './operator/paused-topics.js';
import { readSqliteRelayGroup } from './operator/sqlite-relay-group.js';
import { readStats } from './operator/sqlite-stats.js';
import { readTopicLag } from './operator/sqlite-topic-lag.js';
import { SqlitePartitionReader } from './reader/sqlite-partition-reader.js';

export type { SqliteStoreOptions } from './sqlite-store-options.js';

/**
 * The SQLite store (better-sqlite3), on the partition engine. Producers insert synchronously on their own
 * connection, inside their transaction; everything else runs on the store's `database`, one connection with
 * serialized `BEGIN IMMEDIATE` writes. One writer at a time per file, so seq order is commit order.
 */
export class SqliteOutboxStore implements OutboxWriter<SqliteTransactionInput>, RelayStore, OutboxOperator, OutboxSchema {
  readonly database: SqliteDatabase;
  readonly tableNames: SqliteTableNames;
  readonly retainPublishedMs: number;
  readonly idempotencyWindowMs: number;
  readonly partitionCount: number;
  /** The partition leases (`RelayLeases`) over the same connection. */
  readonly leases: RelayLeases;
  /** The read path (`PartitionReader`): reads owned partitions, fenced completion. */
  readonly reader: PartitionReader;
  readonly #migrations: readonly ResolvedSqliteMigration[];

  constructor(database: SqliteDatabase, options: SqliteStoreOptions = {}) {
    const resolved = resolveSqliteStoreOptions(options);
    this.database = database;
    this.tableNames = resolved.tableNames;
    this.retainPublishedMs = resolved.retainPublishedMs;
    this.idempotencyWindowMs = resolved.idempotencyWindowMs;
    this.partitionCount = resolved.partitionCount;
    this.#migrations = resolvedSqliteMigrations(this.tableNames, { partitionCount: this.partitionCount });
    this.leases = new SqliteRelayLeases(database, this.tableNames);
    this.reader = new SqlitePartitionReader(database, this.tableNames, { retainPublished: this.retainPublishedMs > 0 });
  }

  /**
   * Inserts in the caller's open transaction: a better-sqlite3 connection inside BEGIN ... COMMIT, or an adapter's
   * (`fromKysely(trx)`, ...); a handle outside any transaction is refused (`OUTBOXER_NOT_IN_TRANSACTION`), writing
   * nothing. Never commits or rolls it back.
   */
  async insert(tx: SqliteTransactionInput, messages: readonly NewOutboxMessage[]): Promise<readonly string[]> {
    if (messages.length === 0) return [];
    const transaction = toSqliteTransaction(tx);
    return insertSqliteMessages(transaction, this.tableNames, messages, await proveSqliteTransaction(transaction));
  }

  async purgePublished(limit: number): Promise<number> {
    if (this.retainPublishedMs <= 0) return 0;
    const t = this.tableNames.outbox;
    const sql = `DELETE FROM ${t} WHERE seq IN (
      SELECT seq FROM ${t} WHERE state = 'published' AND published_at < ${SQLITE_NOW_MS} - ? ORDER BY published_at LIMIT ?)`;
    return this.database.write(() => this.database.run(sql, [this.retainPublishedMs, limit]));
  }

  purgeIdempotencyKeys(limit: number): Promise<number> {
    const k = this.tableNames.idempotency;
    const sql = `DELETE FROM ${k} WHERE idempotency_key IN (
      SELECT idempotency_key FROM ${k} WHERE created_at < ${SQLITE_NOW_MS} - ? ORDER BY created_at LIMIT ?)`;
    return this.database.write(() => this.database.run(sql, [this.idempotencyWindowMs, limit]));
  }

  stats(): Promise<OutboxStats> {
    return readStats(this.database, this.tableNames);
  }

  /** The gauges of a metrics scrape: counts exact up to 10,000, then estimated (operator/sqlite-gauges.ts). */
  gauges(): Promise<OutboxGauges> {
    return readSqliteGauges(this.database, this.tableNames);
  }

  listDead(limit: number, filter?: DestinationFilter): Promise<DeadMessage[]> {
    return listDeadMessages(this.database, this.tableNames, limit, filter);
  }

  retryDead(ids: readonly string[] | 'all', filter?: DestinationFilter): Promise<number> {
    return retryDeadMessages(this.database, this.tableNames, ids, filter);
  }

  purgeDead(ids: readonly string[] | 'all', filter?: DestinationFilter): Promise<number> {
    return purgeDeadMessages(this.database, this.tableNames, ids, filter);
  }

  /** Pending messages and oldest age per topic and destination; reads every pending row: not for scrapes. */
  topicLag(limit: number): Promise<TopicLag[]> {
    return readTopicLag(this.database, this.tableNames, limit);
  }

  pauseTopic(topic: string, reason: string): Promise<boolean> {
    return pauseSqliteTopic(this.database, this.tableNames, topic, reason);
  }

  resumeTopic(topic: string): Promise<boolean> {
    return resumeSqliteTopic(this.database, this.tableNames, topic);
  }

  pausedTopics(): Promise<TopicPause[]> {
    return listPausedTopics(this.database, this.tableNames);
  }

  /** Pauses a whole destination (every topic of it) for every relay until `resumeDestination` (`<table>_paused_destinations`). */
  pauseDestination(destination: string, reason: string): Promise<boolean> {
    return pauseSqliteDestination(this.database, this.tableNames, destination, reason);
  }

  resumeDestination(destination: string): Promise<boolean> {
    return resumeSqliteDestination(this.database, this.tableNames, destination);
  }

  pausedDestinations(): Promise<DestinationPause[]> {
    return listPausedDestinations(this.database, this.tableNames);
  }

  relayGroup(): Promise<RelayGroup> {
    return readSqliteRelayGroup(this.database, this.tableNames);
  }

  /** Pending messages in store order, filtered (operator/sqlite-pending-messages.ts); never their bodies. */
  listPending(query: PendingQuery): Promise<PendingMessage[]> {
    return listSqlitePending(this.database, this.tableNames, query);
  }

  /** One pending message; its headers' values and body only with `{ body: true }`. */
  inspectPending(id: string, options?: { readonly body?: boolean }): Promise<PendingMessageDetail | undefined> {
    return inspectSqlitePending(this.database, this.tableNames, id, options);
  }

  /** Deletes these messages where they are still pending; a relay may still publish one it read before (once). */
  deletePending(ids: readonly string[]): Promise<number> {
    return deleteSqlitePending(this.database, this.tableNames, ids);
  }

  /** Applies what is missing in one `BEGIN IMMEDIATE`: processes migrating the same file at once apply it once. */
  async migrate(): Promise<void> {
    await applySqliteMigrations(this.database, this.tableNames, this.tableNames.table, this.#migrations);
  }

  /** The start check: `OUTBOXER_NOT_MIGRATED` unless every migration this code needs is recorded for the table. */
  async verify(): Promise<void> {
    const missing = await missingSqliteMigrations(this.database, this.tableNames, this.tableNames.table, this.#migrations);
    if (missing.length === 0) {
      await this.#checkWritable();
      return;
    }
    const what =
      missing.length === this.#migrations.length
        ? 'no outboxer table or migrations found'
        : `versions ${missing.join(', ')} of ${this.#migrations.length} are missing`;
    throw new OutboxerError(
      'OUTBOXER_NOT_MIGRATED',
      `SQLite outbox table ${this.tableNames.table} in ${this.database.handle.name} is not migrated (${what}): run 'outboxer migrate' with the same file and table (or store.migrate(), or apply 'outboxer sql')`,
    );
  }

  /** A relay writes every outcome: a read-only file, directory or mount is found here, not at the first completion. */
  async #checkWritable(): Promise<void> {
    try {
      // a write that changes nothing: BEGIN IMMEDIATE alone succeeds on a read-only connection
      await this.database.write(() => this.database.run(`UPDATE ${this.tableNames.partitioning} SET singleton = 1`));
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      if (typeof code === 'string' && code.startsWith('SQLITE_READONLY')) {
        throw new OutboxerError(
          'OUTBOXER_PERMISSION_DENIED',
          `SQLite file ${this.database.handle.name} is read-only for this process (${code}): a relay writes every outcome; give it write access to the file and its directory (WAL files live beside it)`,
          { cause: error },
        );
      }
      throw error;
    }
  }

  migrationSql(): string {
    return sqliteMigrationScript('outboxer schema', this.tableNames, this.tableNames.table, this.#migrations);
  }

  async close(): Promise<void> {
    await this.database.close();
  }
}
