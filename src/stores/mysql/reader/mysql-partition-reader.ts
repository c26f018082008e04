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
import type { MysqlDatabase } from '../database.js';
import { readCommitted } from '../read-committed.js';
import { listPausedDestinations } from '../operator/paused-destinations.js';
import { listPausedTopics } from '../operator/paused-topics.js';
import { quoteMysql, type MysqlTableNames } from '../table-names.js';
import { type MessageRow, toMessage, waitsForOf } from '../../shared/message-rows.js';
import { checkCompletions, checkDelay, checkDueDestinations, checkRead, outcomesOf } from '../../shared/partition-read-checks.js';
import { type CompletionJob, completePartitions, type OutcomeRow, type PartitionWritten, publishedRows } from './complete-partitions.js';
import { canCompleteDirectly, completePublishedDirect, DirectCompletionMissed } from './complete-published-direct.js';
import { countAttempt, resetUnclean } from './count-attempt.js';
import { HorizonProbe, readTag } from './horizon-probe.js';
import { readPartitionsSql } from './read-partitions.js';
import { byPartitionAndSeq } from '../../shared/partition-message-order.js';

interface ReadRow extends MessageRow {
  partition_no: number | string;
  source: PartitionMessage['source'];
  waits: string | null;
}

/** The read path of engine v2 on MariaDB or MySQL; reached as `store.reader`. */
export class MysqlPartitionReader implements PartitionReader {
  readonly #database: MysqlDatabase;
  readonly #names: MysqlTableNames;
  readonly #retain: boolean;
  readonly #horizon: HorizonProbe;
  /** The table's partition count: fixed when the table is created on this engine (no resize), so read once. */
  #partitionCount: number | undefined;
  #mariadb: boolean | undefined;

  constructor(database: MysqlDatabase, names: MysqlTableNames, options: { readonly retainPublished: boolean }) {
    this.#database = database;
    this.#names = names;
    this.#retain = options.retainPublished;
    this.#horizon = new HorizonProbe(database);
  }

  /**
   * The horizon (before the SELECT), the SELECT (its own snapshot), then the tag only when a fresh branch returned
   * rows: see docs/design/read-path.md, "Late commits", and `horizon-probe.ts`. A recheck applies when `horizon >= tag`.
   * `options.dueDestinations` splits the due branch per destination (the others' due rows are not read).
   */
  async read(relayId: string, partitionCount: number, requests: readonly PartitionReadRequest[], options?: PartitionReadOptions): Promise<PartitionReadResult> {
    checkRead(relayId, partitionCount, requests);
    const dueDestinations = checkDueDestinations(options);
    const horizon = await this.#horizon.horizon();
    const settled = new Set<number>();
    if (requests.length === 0 || (await this.#tablePartitionCount()) !== partitionCount) {
      return { horizon, tag: null, partitions: outcomesOf(requests, [], settled), messages: [] };
    }
    for (const r of requests) if (r.recheck !== null && BigInt(horizon) >= BigInt(r.recheck.tag)) settled.add(r.partition);
    // The big SELECT costs about 0.25 ms of the server's time per branch to plan and run, whether or not it finds rows:
    // first ask, with index probes, which partitions hold a pending row at all and which hold a scheduled one (due or
    // not). A row that commits (or is scheduled) after that walk is read next time; one that could settle a recheck has
    // ended before the horizon probe, so the walk sees it. Only the due branch depends on the walk: the hold probe stays
    // in the SELECT, so it sees every scheduled row the SELECT's own snapshot does.
    const busy = await this.#partitionsWithPending(requests);
    const reading = requests.filter((r) => busy.has(r.partition));
    const scheduled = new Set(reading.filter((r) => busy.get(r.partition) === true).map((r) => r.partition));
    const { rows } =
      reading.length === 0 ? { rows: [] } : await this.#database.query(readPartitionsSql(this.#names, reading, settled, scheduled, dueDestinations));
    const messages = (rows as unknown as ReadRow[]).map(toPartitionMessage).sort(byPartitionAndSeq);
    const tag = messages.some((m) => m.source === 'fresh') ? await readTag(this.#database) : null;
    return { horizon, tag, partitions: outcomesOf(requests, messages, settled), messages };
  }

  /** Rows here carry their partition: `options.partitionCount` only fences, a partition is written only while the table has that count. */
  async complete(relayId: string, completions: readonly PartitionCompletion[], options?: PartitionCompleteOptions): Promise<readonly CompletionOutcome[]> {
    if (completions.length === 0) return [];
    checkCompletions(relayId, completions, options);
    const rows: OutcomeRow[] = completions.flatMap((c) => [
      ...publishedRows(relayId, c),
      ...c.failed.map((f) => ({
        partition: c.partition,
        id: f.id,
        kind: 'dead' in f ? ('dead' as const) : ('failed' as const),
        delayMs: 'dead' in f ? 0 : f.retryInMs,
        error: f.error,
      })),
      ...c.held.map((h) => ({ partition: c.partition, id: h.id, kind: 'held' as const, delayMs: h.delayMs, error: h.reason })),
    ]);
    for (const row of rows) checkDelay(relayId, row.id, row.delayMs);
    const job: CompletionJob = { names: this.#names, relayId, completions, rows, retain: this.#retain, partitionCount: options?.partitionCount };
    const outcomes = (await this.#completeDirectly(job)) ?? (await readCommitted(this.#database, (tx) => completePartitions(tx, job)));
    const progressed = outcomes.filter((o) => o.applied && o.unclean > 0 && o.published > 0);
    await resetUnclean(this.#database, this.#names, relayId, progressed);
    return outcomes.map((o) => ({ partition: o.partition, epoch: o.epoch, applied: o.applied, changed: o.changed, skipped: o.skipped }));
  }

  /** The usual completion without row locks (`complete-published-direct.ts`), on MariaDB; undefined where it cannot stand. */
  async #completeDirectly(job: CompletionJob): Promise<PartitionWritten[] | undefined> {
    if (!canCompleteDirectly(job.rows) || !(await this.#isMariadb())) return undefined;
    try {
      return await readCommitted(this.#database, (tx) => completePublishedDirect(tx, job));
    } catch (error) {
      if (error instanceof DirectCompletionMissed) return undefined;
      throw error;
    }
  }

  /** MySQL has no `SET STATEMENT`: its completions lock each row first, as every completion did before. */
  async #isMariadb(): Promise<boolean> {
    if (this.#mariadb === undefined) {
      const { rows } = await this.#database.query(`SELECT VERSION() LIKE '%MariaDB%' AS mariadb`);
      this.#mariadb = Number(rows[0]?.mariadb) === 1;
    }
    return this.#mariadb;
  }

  countAttempt(relayId: string, lease: Pick<PartitionLease, 'partition' | 'epoch'>, id: string): Promise<boolean> {
    return readCommitted(this.#database, (tx) => countAttempt(tx, this.#names, relayId, lease, id));
  }

  /** The topics operators paused; a table without the list (not migrated that far) has no operator pause. */
  async pausedTopics(): Promise<readonly TopicPause[]> {
    try {
      return await listPausedTopics(this.#database, this.#names);
    } catch (error) {
      if ((error as { code?: unknown } | null)?.code === 'ER_NO_SUCH_TABLE') return [];
      throw error;
    }
  }

  /** The destinations operators paused as a whole; a table without the list (not migrated to version 5) has none. */
  async destinationPauses(): Promise<readonly DestinationPause[]> {
    try {
      return await listPausedDestinations(this.#database, this.#names);
    } catch (error) {
      if ((error as { code?: unknown } | null)?.code === 'ER_NO_SUCH_TABLE') return [];
      throw error;
    }
  }

  /** The requested partitions that hold a pending row, each with whether one of its pending rows is scheduled (`due_at` set). */
  async #partitionsWithPending(requests: readonly PartitionReadRequest[]): Promise<ReadonlyMap<number, boolean>> {
    const outbox = this.#names.outbox;
    const readIndex = quoteMysql(`${this.#names.table}_read_idx`);
    const { rows } = await this.#database.query(
      // A scalar subquery with LIMIT 1 is one index probe; MariaDB runs EXISTS here as a semi-join over every pending
      // row (192 ms at 200k rows, against 1-2 ms). Scheduled rows sort last among a partition's pending rows in the read
      // index, so the last entry read backwards has due_at set exactly when one of them has: one probe whatever the
      // number of scheduled rows (a range over the due rows walks all of them, a ref over due_at IS NOT NULL every
      // pending row of the partition).
      `SELECT p.partition_no, (SELECT o.due_at FROM ${outbox} o FORCE INDEX (${readIndex})
          WHERE o.partition_no = p.partition_no AND o.state = 'pending' ORDER BY o.due_at DESC, o.seq DESC LIMIT 1) IS NOT NULL AS scheduled
        FROM ${this.#names.partitions} p WHERE p.partition_no IN (?)
        AND (SELECT o.seq FROM ${outbox} o FORCE INDEX (${readIndex})
          WHERE o.partition_no = p.partition_no AND o.state = 'pending' LIMIT 1) IS NOT NULL`,
      [requests.map((r) => r.partition)],
    );
    return new Map(rows.map((row) => [Number(row.partition_no), Number(row.scheduled) === 1]));
  }

  async #tablePartitionCount(): Promise<number | undefined> {
    if (this.#partitionCount === undefined) {
      const { rows } = await this.#database.query(`SELECT partition_count FROM ${this.#names.partitioning}`);
      const count = rows[0]?.partition_count;
      if (count !== undefined) this.#partitionCount = Number(count);
    }
    return this.#partitionCount;
  }
}

function toPartitionMessage(row: ReadRow): PartitionMessage {
  const message = toMessage({ ...row, attempts: Number(row.attempts) }) as OutboxMessage & {
    -readonly [K in 'partition' | 'source' | 'waitsFor']: PartitionMessage[K];
  };
  message.partition = Number(row.partition_no);
  message.source = row.source;
  message.waitsFor = waitsForOf(row.waits);
  return message;
}
