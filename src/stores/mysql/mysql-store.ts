import { ConfigurationError } from '../../core/errors.js';
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
import { checkProcessPrivilege, isConnectTimeout, isSilentServer, mysqlCheckError, mysqlNotMigrated, type MysqlServerAddress } from './connection-errors.js';
import type { MysqlDatabase } from './database.js';
import { insertMessages, MARIADB_GUARD, type MysqlWriteGuard } from './insert-messages.js';
import { toMysqlTransaction, type MysqlTransactionInput } from './mysql-transaction.js';
import { isUnknownVariable, proveMysqlTransaction } from './prove-transaction.js';
import { vouchedOpen } from '../shared/open-transaction.js';
import { MysqlRelayLeases } from './leases/mysql-relay-leases.js';
import { applyMysqlMigrations, missingMysqlMigrations, mysqlMigrationScript } from './migration-runner.js';
import { MYSQL_NOW, resolvedMysqlMigrations, type ResolvedMysqlMigration } from './migrations.js';
import { listDead, purgeDead, retryDead } from './operator/dead-messages.js';
import { deletePending, inspectPending, listPending } from './operator/pending-messages.js';
import { readGauges } from './operator/gauges.js';
import { listPausedDestinations, pauseDestination, resumeDestination } from './operator/paused-destinations.js';
import { listPausedTopics, pauseTopic, resumeTopic } from './operator/paused-topics.js';
import { readRelayGroup } from './operator/relay-group.js';
import { readStats } from './operator/stats.js';
import { readTopicLag } from './operator/topic-lag.js';
import { MysqlPartitionReader } from './reader/mysql-partition-reader.js';
import { type MysqlStoreOptions, resolveMysqlStoreOptions } from './mysql-store-options.js';
import type { MysqlTableNames } from './table-names.js';

export type { MysqlStoreOptions } from './mysql-store-options.js';

/**
 * The caller's transaction: a mysql2 connection inside `beginTransaction()` (or with autocommit off), or the `tx`
 * that `MysqlDatabase.transaction` (and so `outbox.transaction(fromMysqlPool(pool), work)`) hands out.
 */
export type MysqlTransaction = MysqlTransactionInput;

/** A database handle that may know its server's address (for telling a silent foreign server from an outage). */
type AddressedDatabase = MysqlDatabase & { readonly server?: MysqlServerAddress };

/**
 * The MariaDB/MySQL store (MariaDB 10.6+, MySQL 8.0.29+), on the partition engine (v2) only. Times are the
 * server's `UTC_TIMESTAMP(6)`; there is no wake signal (relays wake on `outbox.notifyCommitted()` or poll).
 */
export class MysqlOutboxStore implements OutboxWriter<MysqlTransaction>, RelayStore, OutboxOperator, OutboxSchema {
  readonly tableNames: MysqlTableNames;
  readonly retainPublishedMs: number;
  readonly idempotencyWindowMs: number;
  readonly partitionCount: number;
  /** The partition leases (`RelayLeases`), over the same database and table. */
  readonly leases: RelayLeases;
  /** The read path (`PartitionReader`): reads owned partitions without row writes, fenced completion. */
  readonly reader: PartitionReader;
  readonly #database: AddressedDatabase;
  readonly #migrations: readonly ResolvedMysqlMigration[];
  /** MariaDB's guard until the server says it has no `@@in_transaction` (MySQL). */
  #writeGuard: MysqlWriteGuard = MARIADB_GUARD;

  constructor(database: MysqlDatabase, options: MysqlStoreOptions = {}) {
    const resolved = resolveMysqlStoreOptions(options);
    this.#database = database;
    this.tableNames = resolved.tableNames;
    this.retainPublishedMs = resolved.retainPublishedMs;
    this.idempotencyWindowMs = resolved.idempotencyWindowMs;
    this.partitionCount = resolved.partitionCount;
    const names = this.tableNames;
    this.#migrations = resolvedMysqlMigrations(names, { partitionCount: this.partitionCount });
    this.leases = new MysqlRelayLeases(database, names);
    this.reader = new MysqlPartitionReader(database, names, { retainPublished: this.retainPublishedMs > 0 });
  }

  /**
   * Inserts in the caller's open transaction: a mysql2 connection after beginTransaction(), the tx of
   * `outbox.transaction(fromMysqlPool(pool), ...)`, or an adapter's (`fromKnex(trx)`, ...). A pool, or a handle outside
   * any transaction, is refused (`OUTBOXER_NOT_IN_TRANSACTION`), writing nothing.
   */
  async insert(tx: MysqlTransaction, messages: readonly NewOutboxMessage[]): Promise<readonly string[]> {
    if (messages.length === 0) return [];
    const transaction = toMysqlTransaction(tx);
    await vouchedOpen(transaction); // a handle known to be closed is refused before any statement
    if (this.#writeGuard === 'TRUE') {
      await proveMysqlTransaction(transaction);
      return insertMessages(transaction, this.tableNames, messages, 'TRUE');
    }
    try {
      return await insertMessages(transaction, this.tableNames, messages, this.#writeGuard);
    } catch (error) {
      if (!isUnknownVariable(error)) throw error;
      // MySQL: no @@in_transaction to guard the statements with; proven before the write instead
      this.#writeGuard = 'TRUE';
      await proveMysqlTransaction(transaction);
      return insertMessages(transaction, this.tableNames, messages, 'TRUE');
    }
  }

  async purgePublished(limit: number): Promise<number> {
    if (this.retainPublishedMs <= 0) return 0;
    const result = await this.#database.query(
      `DELETE FROM ${this.tableNames.outbox} WHERE state = 'published' AND published_at < TIMESTAMPADD(MICROSECOND, ?, ${MYSQL_NOW})
        ORDER BY published_at LIMIT ?`,
      [-this.retainPublishedMs * 1000, limit],
    );
    return result.affectedRows;
  }

  async purgeIdempotencyKeys(limit: number): Promise<number> {
    const result = await this.#database.query(
      `DELETE FROM ${this.tableNames.idempotency} WHERE created_at < TIMESTAMPADD(MICROSECOND, ?, ${MYSQL_NOW}) ORDER BY created_at LIMIT ?`,
      [-this.idempotencyWindowMs * 1000, limit],
    );
    return result.affectedRows;
  }

  stats(): Promise<OutboxStats> {
    return readStats(this.#database, this.tableNames);
  }

  /** The gauges of a metrics scrape in a few index reads: counts exact up to 10,000, then estimated (operator/gauges.ts). */
  gauges(): Promise<OutboxGauges> {
    return readGauges(this.#database, this.tableNames);
  }

  /** Dead messages in the order they died; only `filter.destination`'s when given (`null`: the rows without one). */
  listDead(limit: number, filter?: DestinationFilter): Promise<DeadMessage[]> {
    return listDead(this.#database, this.tableNames, limit, filter);
  }

  retryDead(ids: readonly string[] | 'all', filter?: DestinationFilter): Promise<number> {
    return retryDead(this.#database, this.tableNames, ids, filter);
  }

  purgeDead(ids: readonly string[] | 'all', filter?: DestinationFilter): Promise<number> {
    return purgeDead(this.#database, this.tableNames, ids, filter);
  }

  /** Pending messages and oldest age per topic and destination; reads every pending row: not for scrapes. */
  topicLag(limit: number): Promise<TopicLag[]> {
    return readTopicLag(this.#database, this.tableNames, limit);
  }

  /** Pauses `topic` for every relay until `resumeTopic` (`<table>_paused_topics`). */
  pauseTopic(topic: string, reason: string): Promise<boolean> {
    return pauseTopic(this.#database, this.tableNames, topic, reason);
  }

  resumeTopic(topic: string): Promise<boolean> {
    return resumeTopic(this.#database, this.tableNames, topic);
  }

  pausedTopics(): Promise<TopicPause[]> {
    return listPausedTopics(this.#database, this.tableNames);
  }

  /** Pauses a whole destination (every topic of it) for every relay until `resumeDestination` (`<table>_paused_destinations`). */
  pauseDestination(destination: string, reason: string): Promise<boolean> {
    return pauseDestination(this.#database, this.tableNames, destination, reason);
  }

  resumeDestination(destination: string): Promise<boolean> {
    return resumeDestination(this.#database, this.tableNames, destination);
  }

  pausedDestinations(): Promise<DestinationPause[]> {
    return listPausedDestinations(this.#database, this.tableNames);
  }

  /** The live relays, the partitions each holds, and the unowned ones, by the database clock. */
  relayGroup(): Promise<RelayGroup> {
    return readRelayGroup(this.#database, this.tableNames);
  }

  /** Pending messages in store order, filtered (operator/pending-messages.ts); never their bodies. */
  listPending(query: PendingQuery): Promise<PendingMessage[]> {
    return listPending(this.#database, this.tableNames, query);
  }

  /** One pending message; its headers' values and body only with `{ body: true }`. */
  inspectPending(id: string, options?: { readonly body?: boolean }): Promise<PendingMessageDetail | undefined> {
    return inspectPending(this.#database, this.tableNames, id, options);
  }

  /** Deletes these messages where they are still pending; a relay may still publish one it read before (once). */
  deletePending(ids: readonly string[]): Promise<number> {
    return deletePending(this.#database, this.tableNames, ids);
  }

  /** Creates what is missing, once across processes (`GET_LOCK`); `partitionCount` counts only for a new table. */
  async migrate(): Promise<void> {
    await applyMysqlMigrations(this.#database, this.tableNames, this.tableNames.table, this.#migrations);
  }

  /**
   * The start check: connects, confirms the table is migrated to the version this code needs, and that the user
   * may read `information_schema.INNODB_TRX` (the reader's late-commit horizon needs PROCESS). Maps mysql2's
   * failures to stable codes: `OUTBOXER_AUTH_FAILED`, `OUTBOXER_DATABASE_NOT_FOUND`, `OUTBOXER_WRONG_PROTOCOL`
   * (told from a timeout only when the handle knows its server's address), or `OUTBOXER_DATABASE_UNAVAILABLE`.
   */
  async verify(): Promise<void> {
    const names = this.tableNames;
    let missing: number[];
    try {
      missing = await missingMysqlMigrations(this.#database, names, names.table, this.#migrations);
    } catch (error) {
      const server = this.#database.server;
      throw mysqlCheckError(error, names, server !== undefined && isConnectTimeout(error) && (await isSilentServer(server)));
    }
    if (missing.length === this.#migrations.length) throw mysqlNotMigrated(names, 'no outboxer table or migrations found');
    if (missing.length > 0) throw mysqlNotMigrated(names, `versions ${missing.join(', ')} of ${this.#migrations.length} are missing`);
    await checkProcessPrivilege(this.#database);
    const session = await this.#database.query('SELECT @@autocommit AS autocommit');
    if (Number(session.rows[0]?.autocommit) !== 1) {
      throw new ConfigurationError(
        'OUTBOXER_INVALID_OPTION',
        `the relay's connections to ${names.outbox} run with autocommit off: its reads would keep one snapshot and never see new rows. Give the store a pool with autocommit on (the server's default)`,
        { options: ['autocommit'] },
      );
    }
  }

  migrationSql(): string {
    return mysqlMigrationScript('outboxer outbox schema', this.tableNames, this.tableNames.table, this.#migrations);
  }

  async close(): Promise<void> {
    await this.#database.close();
  }
}
