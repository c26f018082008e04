import type { OutboxMessage } from '../../../core/message.js';
import type {
  CompletionOutcome,
  PartitionCompleteOptions,
  PartitionCompletion,
  PartitionLease,
  PartitionMessage,
  PartitionReader,
  PartitionReadOptions,
  PartitionReadRequest,
  PartitionReadResult,
  TopicPause,
  DestinationPause,
} from '../../../core/ports.js';
import { codeOf, LOCK_NOT_AVAILABLE } from '../connection-errors.js';
import { affectedRows, type PgDatabase, type QueryResultLike } from '../database.js';
import { type MessageRow, toMessage, waitsForOf } from '../../shared/message-rows.js';
import { namedStatement, type NamedStatement, runStatement } from '../named-statement.js';
import { listPausedDestinations, pausedDestinationStatements, type PausedDestinationStatements } from '../operator/paused-destinations.js';
import { listPausedTopics, pausedTopicStatements, type PausedTopicStatements } from '../operator/paused-topics.js';
import type { TableName } from '../sql.js';
import {
  completeDeleting,
  completePublishedDeleting,
  completePublishedDirectDeleting,
  completePublishedDirectRetaining,
  completePublishedRetaining,
  completeRetaining,
} from './complete-partitions.js';
import { countAttempt } from './count-attempt.js';
import { readPartitions } from './read-partitions.js';
import { checkCompletions, checkDelay, checkDueDestinations, checkPublishedSeqs, checkRead, outcomesOf } from '../../shared/partition-read-checks.js';
import { readerTables, type ReaderStatement, type ReaderTables } from './reader-tables.js';
import { resetUnclean } from './reset-unclean.js';
import { byPartitionAndSeq } from '../../shared/partition-message-order.js';

interface ReadRow extends MessageRow {
  horizon: string | null;
  tag: string | null;
  settled: number[] | null;
  partition: number | null;
  source: PartitionMessage['source'];
  /** The hold probe's row, `<seq>:<ms until due>`, or null when the key waits for nothing. */
  waits: string | null;
}

interface CompleteRow {
  partition: number;
  epoch: string;
  applied: boolean;
  unclean: number;
  published: number;
  scheduled: number;
  skipped: string[];
}

const UNDEFINED_TABLE = '42P01';

/** The read path of engine v2 on PostgreSQL or PGlite; reached as `store.reader`. */
export class PostgresPartitionReader implements PartitionReader {
  readonly #database: PgDatabase;
  readonly #tables: ReaderTables;
  readonly #prepare: boolean;
  readonly #retain: boolean;
  readonly #named = new Map<string, NamedStatement>();
  readonly #pauses: PausedTopicStatements;
  readonly #destinationPauses: PausedDestinationStatements;

  constructor(database: PgDatabase, name: TableName, options: { readonly preparedStatements: boolean; readonly retainPublished: boolean }) {
    this.#database = database;
    this.#tables = readerTables(name);
    this.#prepare = options.preparedStatements;
    this.#retain = options.retainPublished;
    this.#pauses = pausedTopicStatements(name);
    this.#destinationPauses = pausedDestinationStatements(name);
  }

  /** `options.dueDestinations` are bound as one `text[]` parameter (NULL without: the same statement either way). */
  async read(relayId: string, partitionCount: number, requests: readonly PartitionReadRequest[], options?: PartitionReadOptions): Promise<PartitionReadResult> {
    checkRead(relayId, partitionCount, requests);
    const dueDestinations = checkDueDestinations(options);
    const result = await this.#run(readPartitions, partitionCount, 'read', [
      requests.map((r) => r.partition),
      requests.map((r) => r.after),
      requests.map((r) => r.recheck?.from ?? null),
      requests.map((r) => r.recheck?.to ?? null),
      requests.map((r) => r.recheck?.tag ?? null),
      requests.map((r) => r.limit),
      dueDestinations,
    ]);
    const rows = result.rows as ReadRow[];
    // the statement's head row (no message) carries the horizon, so even an empty read returns it; fresh rows carry the tag
    const head = rows.find((row) => row.horizon !== null) as ReadRow;
    const tag = rows.find((row) => row.tag !== null)?.tag ?? null;
    const messages = rows
      .filter((row) => row.partition !== null)
      .map(toPartitionMessage)
      .sort(byPartitionAndSeq);
    const settled = new Set(head.settled);
    return {
      horizon: head.horizon as string,
      tag,
      partitions: outcomesOf(requests, messages, settled),
      messages,
    };
  }

  /** With `options.partitionCount`, rows are probed by partition and seq as the partition index spells them (see `lockedPartitions`). */
  async complete(relayId: string, completions: readonly PartitionCompletion[], options?: PartitionCompleteOptions): Promise<readonly CompletionOutcome[]> {
    if (completions.length === 0) return [];
    checkCompletions(relayId, completions, options);
    const partitionCount = options?.partitionCount ?? 0;
    const rows = completions.flatMap((c) => {
      const seqs = checkPublishedSeqs(relayId, c);
      return [
        ...c.published.map((id, i) => ({ partition: c.partition, id, kind: 'published' as const, delayMs: 0, error: null, seq: seqs?.[i] ?? null })),
        ...c.failed.map((f) => ({
          partition: c.partition,
          id: f.id,
          kind: 'dead' in f ? ('dead' as const) : ('failed' as const),
          delayMs: 'dead' in f ? 0 : f.retryInMs,
          error: f.error,
          seq: null,
        })),
        ...c.held.map((h) => ({ partition: c.partition, id: h.id, kind: 'held' as const, delayMs: h.delayMs, error: h.reason, seq: null })),
      ];
    });
    for (const row of rows) checkDelay(relayId, row.id, row.delayMs);
    const partitions = completions.map((c) => c.partition);
    const epochs = completions.map((c) => c.epoch);
    const result = rows.every((r) => r.kind === 'published' && r.seq !== null)
      ? await this.#completePublished(partitionCount, [
          relayId,
          partitions,
          epochs,
          rows.map((r) => r.partition),
          rows.map((r) => r.seq as string),
          rows.map((r) => r.id),
        ])
      : await this.#run(this.#retain ? completeRetaining : completeDeleting, partitionCount, 'complete', [
          relayId,
          partitions,
          epochs,
          rows.map((r) => r.partition),
          rows.map((r) => r.id),
          rows.map((r) => r.kind),
          rows.map((r) => r.delayMs),
          rows.map((r) => r.error),
          rows.map((r) => r.seq),
        ]);
    const outcomes = result.rows as CompleteRow[];
    const progressed = outcomes.filter((o) => o.applied && o.unclean > 0 && o.published > 0);
    if (progressed.length > 0) {
      await this.#run(resetUnclean, 0, 'resetUnclean', [relayId, progressed.map((o) => o.partition), progressed.map((o) => o.epoch)]);
    }
    return outcomes.map((o) => ({ partition: o.partition, epoch: o.epoch, applied: o.applied, changed: o.published + o.scheduled, skipped: o.skipped }));
  }

  /** Published rows only: written directly, and again skipping locked rows when one was locked (`completePublishedDirect`). */
  async #completePublished(partitionCount: number, args: Parameters<(typeof completePublishedDeleting)['params']>): Promise<QueryResultLike> {
    try {
      return await this.#run(
        this.#retain ? completePublishedDirectRetaining : completePublishedDirectDeleting,
        partitionCount,
        'completePublishedDirect',
        args,
      );
    } catch (error) {
      if (codeOf(error) !== LOCK_NOT_AVAILABLE) throw error;
      return await this.#run(this.#retain ? completePublishedRetaining : completePublishedDeleting, partitionCount, 'completePublished', args);
    }
  }

  async countAttempt(relayId: string, lease: Pick<PartitionLease, 'partition' | 'epoch'>, id: string): Promise<boolean> {
    return affectedRows(await this.#run(countAttempt, 0, 'countAttempt', [relayId, lease.partition, lease.epoch, id])) === 1;
  }

  /**
   * The topics operators paused, read by each relay every few seconds. A table not yet migrated to version 9 has
   * no such list, and so no operator pause: that reads as none rather than stopping the relay.
   */
  async pausedTopics(): Promise<readonly TopicPause[]> {
    try {
      return await listPausedTopics(this.#database, this.#pauses, this.#prepare);
    } catch (error) {
      if (codeOf(error) === UNDEFINED_TABLE) return [];
      throw error;
    }
  }

  /**
   * The destinations operators paused as a whole, read with `pausedTopics` each period. A table not yet migrated to
   * version 13 has no such list: that reads as none rather than stopping the relay.
   */
  async destinationPauses(): Promise<readonly DestinationPause[]> {
    try {
      return await listPausedDestinations(this.#database, this.#destinationPauses, this.#prepare);
    } catch (error) {
      if (codeOf(error) === UNDEFINED_TABLE) return [];
      throw error;
    }
  }

  #run<A extends readonly unknown[]>(statement: ReaderStatement<A>, partitionCount: number, label: string, args: A): Promise<QueryResultLike> {
    const cacheKey = `${label}:${partitionCount}`;
    let named = this.#named.get(cacheKey);
    if (named === undefined) {
      named = namedStatement(statement.sql(this.#tables, partitionCount));
      this.#named.set(cacheKey, named);
    }
    return runStatement(this.#database, named, statement.params(...args), this.#prepare);
  }
}

function toPartitionMessage(row: ReadRow): PartitionMessage {
  const message = toMessage(row) as OutboxMessage & { -readonly [K in 'partition' | 'source' | 'waitsFor']: PartitionMessage[K] };
  message.partition = row.partition as number;
  message.source = row.source;
  message.waitsFor = waitsForOf(row.waits);
  return message;
}
