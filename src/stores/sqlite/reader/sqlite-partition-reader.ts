import type {
  CompletionOutcome,
  PartitionCompleteOptions,
  PartitionCompletion,
  PartitionLease,
  PartitionReader,
  PartitionReadOptions,
  PartitionReadRequest,
  PartitionReadResult,
  TopicPause,
  DestinationPause,
} from '../../../core/ports.js';
import { checkCompletions, checkDelay, checkDueDestinations, checkRead, outcomesOf } from '../../shared/partition-read-checks.js';
import type { SqliteDatabase } from '../database.js';
import { inReadSnapshot } from '../leases/sqlite-read-snapshot.js';
import { SQLITE_NOW_MS } from '../migrations.js';
import type { SqliteTableNames } from '../table-names.js';
import { listPausedDestinations } from '../operator/paused-destinations.js';
import { listPausedTopics } from '../operator/paused-topics.js';
import { publishedSeqs, sqliteCompleteStatements, type SqliteCompleteStatements } from './sqlite-complete-statements.js';
import { readPartition } from './sqlite-read-partition.js';
import { sqliteReadStatements, type SqliteReadStatements } from './sqlite-read-statements.js';

const NOW = `SELECT ${SQLITE_NOW_MS} AS now`;

/**
 * SQLite has one writer at a time, so seq order is commit order and no row commits late below a read's position:
 * every read returns this horizon, above the one tag reads hand out (`TAG`), so every recheck a relay sends back is
 * applied. A tag no SQLite read made (above the horizon) is reported as not applied, as on every store.
 */
const HORIZON = 1n;
const TAG = '0';

interface OutcomeRow {
  readonly partition: number;
  readonly id: string;
  readonly kind: 'publish' | 'publishSeq' | 'fail' | 'dead' | 'hold';
  readonly delayMs: number;
  readonly error: string | null;
  readonly seq?: string;
}

/** The read path of engine v2 on a SQLite file; reached as `store.reader`. */
export class SqlitePartitionReader implements PartitionReader {
  readonly #database: SqliteDatabase;
  readonly #names: SqliteTableNames;
  readonly #read: SqliteReadStatements;
  readonly #complete: SqliteCompleteStatements;

  constructor(database: SqliteDatabase, names: SqliteTableNames, options: { readonly retainPublished: boolean }) {
    this.#database = database;
    this.#names = names;
    this.#read = sqliteReadStatements(names);
    this.#complete = sqliteCompleteStatements(names, options.retainPublished);
  }

  /**
   * Reads every requested partition in one read transaction (one snapshot), writing nothing. A read with another
   * count than the table's reads nothing: its rows would map to other partitions. With `options.dueDestinations` the
   * due branch runs once per destination named (`dueOf`), of its rows only.
   */
  async read(relayId: string, partitionCount: number, requests: readonly PartitionReadRequest[], options?: PartitionReadOptions): Promise<PartitionReadResult> {
    checkRead(relayId, partitionCount, requests);
    const dueDestinations = checkDueDestinations(options);
    const database = this.#database;
    return database.read(() =>
      inReadSnapshot(database, () => {
        const now = Number(database.get(NOW)?.now);
        const current = Number(database.get(this.#read.partitionCount)?.partition_count);
        const settled = new Set<number>();
        const found =
          current !== partitionCount
            ? []
            : [...requests]
                .sort((a, b) => a.partition - b.partition)
                .map((request) => {
                  const applies = request.recheck !== null && BigInt(request.recheck.tag) <= HORIZON;
                  if (applies) settled.add(request.partition);
                  return readPartition(database, this.#read, request, applies, now, dueDestinations);
                });
        const messages = found.flat();
        return {
          horizon: HORIZON.toString(),
          tag: messages.some((m) => m.source === 'fresh') ? TAG : null,
          partitions: outcomesOf(requests, messages, settled),
          messages,
        };
      }),
    );
  }

  /** Rows here carry their partition: `options.partitionCount` only fences, a partition is written only while the table has that count. */
  async complete(relayId: string, completions: readonly PartitionCompletion[], options?: PartitionCompleteOptions): Promise<readonly CompletionOutcome[]> {
    if (completions.length === 0) return [];
    const rows = completions.map((c) => [
      ...publishedSeqs(relayId, c).map((seq, i): OutcomeRow => {
        const row = { partition: c.partition, id: c.published[i] as string, delayMs: 0, error: null };
        return seq === undefined ? { ...row, kind: 'publish' } : { ...row, kind: 'publishSeq', seq };
      }),
      ...c.failed.map((f): OutcomeRow => ({
        partition: c.partition,
        id: f.id,
        kind: 'dead' in f ? 'dead' : 'fail',
        delayMs: 'dead' in f ? 0 : f.retryInMs,
        error: f.error,
      })),
      ...c.held.map((h): OutcomeRow => ({ partition: c.partition, id: h.id, kind: 'hold', delayMs: h.delayMs, error: h.reason })),
    ]);
    checkCompletions(relayId, completions, options);
    for (const row of rows.flat()) checkDelay(relayId, row.id, row.delayMs);
    const database = this.#database;
    const sql = this.#complete;
    return database.write(() => {
      const now = Number(database.get(NOW)?.now);
      return completions.map((c, index): CompletionOutcome => {
        const epoch = BigInt(c.epoch).toString();
        const lease = database.get(sql.lease, [{ partition: c.partition, epoch, relayId, count: options?.partitionCount ?? null }]);
        if (lease === undefined) return { partition: c.partition, epoch, applied: false, changed: 0, skipped: [] };
        let changed = 0;
        let published = 0;
        for (const row of rows[index] ?? []) {
          const written = database.run(sql[row.kind], [{ ...row, now }]);
          changed += written;
          if (row.kind === 'publish' || row.kind === 'publishSeq') published += written;
        }
        if (published > 0 && Number(lease.unclean) > 0) database.run(sql.resetUnclean, [{ partition: c.partition }]);
        return { partition: c.partition, epoch, applied: true, changed, skipped: [] };
      });
    });
  }

  countAttempt(relayId: string, lease: Pick<PartitionLease, 'partition' | 'epoch'>, id: string): Promise<boolean> {
    return this.#database.write(() => this.#database.run(this.#complete.countAttempt, [{ id, partition: lease.partition, epoch: lease.epoch, relayId }]) === 1);
  }

  /** The topics operators paused; a file without the paused-topics table has no operator pause (none, not an error). */
  async pausedTopics(): Promise<readonly TopicPause[]> {
    try {
      return await listPausedTopics(this.#database, this.#names);
    } catch (error) {
      if (error instanceof Error && /no such table/i.test(error.message)) return [];
      throw error;
    }
  }

  /** The destinations operators paused as a whole; a file not migrated to version 5 has none (not an error). */
  async destinationPauses(): Promise<readonly DestinationPause[]> {
    try {
      return await listPausedDestinations(this.#database, this.#names);
    } catch (error) {
      if (error instanceof Error && /no such table/i.test(error.message)) return [];
      throw error;
    }
  }
}
