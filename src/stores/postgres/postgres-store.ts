import type { DeadMessage, NewOutboxMessage } from '../../core/message.js';
import type {
  DestinationPause,
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
import { affectedRows, type PgDatabase } from './database.js';
import { PostgresRelayLeases } from './leases/postgres-relay-leases.js';
import { PostgresPartitionReader } from './reader/postgres-partition-reader.js';
import { insertMessages, type PostgresWriter } from './insert-messages.js';
import { toPgTransaction, type PgTransactionInput } from './pg-transaction.js';
import { buildWriterStatements } from './writer-statements.js';
import { PostgresOperatorQueries } from './operator/postgres-operator-queries.js';
import { readGauges } from './gauges-sql.js';
import type { DestinationFilter, OutboxGauges } from '../../core/ports/outbox-operator.js';
import type { PendingMessage, PendingMessageDetail, PendingQuery } from '../../core/ports/pending-messages.js';
import { databaseCheckError, notMigrated } from './connection-errors.js';
import { missingMigrations } from './migration-runner.js';
import { migrations, migrationScript, runMigrations } from './migrations.js';
import { nameStatements, runStatement } from './named-statement.js';
import { type PostgresStoreOptions, resolvePostgresStoreOptions } from './postgres-store-options.js';
import { buildStatements, destinationParams, type RunStatement, type TableName } from './sql.js';

export type { PostgresStoreOptions } from './postgres-store-options.js';

interface DeadRow {
  id: string;
  topic: string;
  type: string;
  key: string | null;
  attempts: number;
  reason: string;
  created_at: Date | string;
  dead_at: Date | string;
  destination: string | null;
}

interface StatsRow {
  pending: number;
  scheduled: number;
  published: number;
  dead: number;
  oldest_pending_age_seconds: number | string;
}

const BULK_BATCH = 1000;

/** The PostgreSQL store; the same SQL serves `pg` and PGlite (see `fromPgPool` and `fromPglite`). */
export class PostgresOutboxStore implements OutboxWriter<PgTransactionInput>, RelayStore, OutboxOperator, OutboxSchema {
  readonly tableName: TableName;
  readonly retainPublishedMs: number;
  readonly idempotencyWindowMs: number;
  readonly preparedStatements: boolean;
  /** The partition leases (`RelayLeases`), over the same database and settings: a role object of its own. */
  readonly leases: RelayLeases;
  /** The read path (`PartitionReader`): reads owned partitions without row writes, fenced completion. */
  readonly reader: PartitionReader;
  readonly #database: PgDatabase;
  readonly #run: RunStatement;
  readonly #writer: PostgresWriter;
  readonly #operator: PostgresOperatorQueries;

  constructor(database: PgDatabase, options: PostgresStoreOptions = {}) {
    this.#database = database;
    const resolved = resolvePostgresStoreOptions(options);
    this.tableName = resolved.tableName;
    this.retainPublishedMs = resolved.retainPublishedMs;
    this.idempotencyWindowMs = resolved.idempotencyWindowMs;
    this.preparedStatements = resolved.preparedStatements;
    this.leases = new PostgresRelayLeases(database, this.tableName, this.preparedStatements);
    this.reader = new PostgresPartitionReader(database, this.tableName, {
      preparedStatements: this.preparedStatements,
      retainPublished: this.retainPublishedMs > 0,
    });
    const statements = nameStatements(buildStatements(this.tableName));
    const prepare = this.preparedStatements;
    this.#run = (executor, statement, params) => runStatement(executor, statements[statement], params ?? [], prepare);
    this.#writer = Object.freeze({ statements: buildWriterStatements(this.tableName), prepare });
    this.#operator = new PostgresOperatorQueries(database, this.tableName, prepare);
  }

  /**
   * Inserts in the caller's open transaction: a pg client inside BEGIN, a PGlite transaction, or an adapter's
   * (`fromKysely(trx)`, ...). A handle outside any transaction is refused (`OUTBOXER_NOT_IN_TRANSACTION`), writing nothing.
   */
  async insert(tx: PgTransactionInput, messages: readonly NewOutboxMessage[]): Promise<readonly string[]> {
    return insertMessages(toPgTransaction(tx), this.#writer, messages);
  }

  async purgePublished(limit: number): Promise<number> {
    if (this.retainPublishedMs <= 0) return 0;
    return affectedRows(await this.#run(this.#database, 'purgePublished', [this.retainPublishedMs, limit]));
  }

  async purgeIdempotencyKeys(limit: number): Promise<number> {
    return affectedRows(await this.#run(this.#database, 'purgeKeys', [this.idempotencyWindowMs, limit]));
  }

  async stats(): Promise<OutboxStats> {
    const result = await this.#run(this.#database, 'stats');
    const row = result.rows[0] as StatsRow;
    return {
      pending: Number(row.pending),
      scheduled: Number(row.scheduled),
      published: Number(row.published),
      dead: Number(row.dead),
      oldestPendingAgeSeconds: Math.max(0, Number(row.oldest_pending_age_seconds)),
    };
  }

  /** The gauges of a metrics scrape in a few index reads: counts exact up to 10,000, then estimated (gauges-sql.ts). */
  gauges(): Promise<OutboxGauges> {
    return readGauges(this.#database, this.tableName, this.preparedStatements);
  }

  async listDead(limit: number, filter: DestinationFilter = {}): Promise<DeadMessage[]> {
    const result = await this.#run(this.#database, 'listDead', [limit, ...destinationParams(filter.destination)]);
    return (result.rows as DeadRow[]).map((row) => ({
      id: row.id,
      topic: row.topic,
      type: row.type,
      key: row.key,
      attempts: row.attempts,
      reason: row.reason,
      createdAt: new Date(row.created_at),
      deadAt: new Date(row.dead_at),
      destination: row.destination ?? null,
    }));
  }

  async retryDead(ids: readonly string[] | 'all', filter: DestinationFilter = {}): Promise<number> {
    if (ids === 'all') return this.#inBatches('retryDeadBatch', filter);
    return affectedRows(await this.#run(this.#database, 'retryDead', [ids, ...destinationParams(filter.destination)]));
  }

  async purgeDead(ids: readonly string[] | 'all', filter: DestinationFilter = {}): Promise<number> {
    if (ids === 'all') return this.#inBatches('purgeDeadBatch', filter);
    return affectedRows(await this.#run(this.#database, 'purgeDead', [ids, ...destinationParams(filter.destination)]));
  }

  /** Pending messages and oldest age per topic; reads every pending row (operator/topic-lag.ts): not for scrapes. */
  topicLag(limit: number): Promise<TopicLag[]> {
    return this.#operator.topicLag(limit);
  }

  /** Pauses `topic` for every relay until `resumeTopic` (migration 9's `<table>_paused_topics`). */
  pauseTopic(topic: string, reason: string): Promise<boolean> {
    return this.#operator.pauseTopic(topic, reason);
  }

  resumeTopic(topic: string): Promise<boolean> {
    return this.#operator.resumeTopic(topic);
  }

  pausedTopics(): Promise<TopicPause[]> {
    return this.#operator.pausedTopics();
  }

  /** Pauses a whole destination (every topic of it) for every relay until `resumeDestination` (migration 13's `<table>_paused_destinations`). */
  pauseDestination(destination: string, reason: string): Promise<boolean> {
    return this.#operator.pauseDestination(destination, reason);
  }

  resumeDestination(destination: string): Promise<boolean> {
    return this.#operator.resumeDestination(destination);
  }

  pausedDestinations(): Promise<DestinationPause[]> {
    return this.#operator.pausedDestinations();
  }

  /** The live relays, the partitions each holds, and the unowned ones, by the database clock. */
  relayGroup(): Promise<RelayGroup> {
    return this.#operator.relayGroup();
  }

  /** Pending messages in store order, filtered (operator/pending-messages.ts); never their bodies. */
  listPending(query: PendingQuery): Promise<PendingMessage[]> {
    return this.#operator.listPending(query);
  }

  /** One pending message; its headers' values and body only with `{ body: true }`. */
  inspectPending(id: string, options?: { readonly body?: boolean }): Promise<PendingMessageDetail | undefined> {
    return this.#operator.inspectPending(id, options);
  }

  /** Deletes these messages where they are still pending; a relay may still publish one it read before (once). */
  deletePending(ids: readonly string[]): Promise<number> {
    return this.#operator.deletePending(ids);
  }

  async migrate(): Promise<void> {
    await runMigrations(this.#database, this.tableName);
  }

  /**
   * The start check: connects and confirms that the table is migrated to the version this code needs
   * (`OUTBOXER_NOT_MIGRATED` otherwise; a schema migrated further by a newer outboxer passes). Maps the
   * driver's failures to stable codes: `OUTBOXER_AUTH_FAILED`, `OUTBOXER_DATABASE_NOT_FOUND`,
   * `OUTBOXER_WRONG_PROTOCOL`, or `OUTBOXER_DATABASE_UNAVAILABLE` while the server is out of reach.
   */
  async verify(): Promise<void> {
    let missing: number[];
    try {
      missing = await missingMigrations(this.#database, this.tableName, migrations);
    } catch (error) {
      throw databaseCheckError(error, this.tableName);
    }
    if (missing.length === migrations.length) throw notMigrated(this.tableName, 'no outboxer table or migrations found');
    if (missing.length > 0) throw notMigrated(this.tableName, `versions ${missing.join(', ')} of ${migrations.length} are missing`);
  }

  migrationSql(): string {
    return migrationScript(this.tableName);
  }

  async close(): Promise<void> {
    await this.#database.close();
  }

  async #inBatches(statement: 'retryDeadBatch' | 'purgeDeadBatch', filter: DestinationFilter): Promise<number> {
    const destination = destinationParams(filter.destination);
    let total = 0;
    for (;;) {
      const changed = affectedRows(await this.#run(this.#database, statement, [BULK_BATCH, ...destination]));
      total += changed;
      if (changed < BULK_BATCH) return total;
    }
  }
}
