import { checkPublishedSeqs } from '../../shared/partition-read-checks.js';
import type { PartitionCompletion } from '../../../core/ports.js';
import type { MysqlExecutor } from '../database.js';
import { FENCED, fenceParams } from '../leases/lease-fence.js';
import { MYSQL_NOW } from '../migrations.js';
import { quoteMysql, type MysqlTableNames } from '../table-names.js';

/** One message's outcome, flattened from the completions. */
export interface OutcomeRow {
  readonly partition: number;
  readonly id: string;
  readonly kind: 'published' | 'failed' | 'dead' | 'held';
  readonly delayMs: number;
  readonly error: string | null;
  /** The seq the read returned with a published id (`publishedSeqs`), normalized: the row is written only if it has it. */
  readonly seq?: string;
}

/** A completion's published rows, with their seqs when it has them: one per id, each a bigint seq, or refused. */
export function publishedRows(relayId: string, completion: PartitionCompletion): OutcomeRow[] {
  const seqs = checkPublishedSeqs(relayId, completion);
  return completion.published.map((id, i) => {
    const row = { partition: completion.partition, id, kind: 'published' as const, delayMs: 0, error: null };
    const seq = seqs?.[i];
    return seq === undefined ? row : { ...row, seq };
  });
}

/** One completion call: the relay's outcomes, flattened to rows, and how to write them. */
export interface CompletionJob {
  readonly names: MysqlTableNames;
  readonly relayId: string;
  readonly completions: readonly PartitionCompletion[];
  readonly rows: readonly OutcomeRow[];
  /** Published rows are marked `published` instead of deleted. */
  readonly retain: boolean;
  /** The partition count the relay read with; each partition is written only while the table has it. */
  readonly partitionCount: number | undefined;
}

export interface PartitionWritten {
  readonly partition: number;
  readonly epoch: string;
  readonly applied: boolean;
  readonly unclean: number;
  readonly published: number;
  readonly changed: number;
  readonly skipped: string[];
}

/**
 * The rows of `ids` (a JSON array, one parameter), reached by the unique `id` index from a derived list:
 * `STRAIGHT_JOIN` keeps the list first and `FORCE INDEX` the index lookup (a plain join of a one-id list was still
 * seen joined by a scan, in chaos). With `WHERE id IN (...)` MariaDB may plan a small table as a full scan, and
 * a DELETE or UPDATE then waits for every row the scan meets that another session locks, whether in the list or
 * not (chaos found a completion waiting 50 s for an operator's lock on another row, its own locks stalling the rest).
 */
function listedRows(names: MysqlTableNames): string {
  return `JSON_TABLE(?, '$[*]' COLUMNS (id VARCHAR(36) CHARACTER SET ascii COLLATE ascii_bin PATH '$')) AS j
      STRAIGHT_JOIN ${names.outbox} AS o FORCE INDEX (${quoteMysql(`${names.table}_id_key`)}) ON o.id = j.id`;
}

/** A pending row as stored: its partition and seq. */
interface StoredRow {
  readonly partition: number;
  readonly seq: string;
}

function storedRow(row: Record<string, unknown>): StoredRow {
  return { partition: Number(row.partition_no), seq: BigInt(row.seq as string | number).toString() };
}

/** Whether the outcome is for this stored row: in the partition it names and, when it carries a seq, with that seq. */
function isRowOf(outcome: OutcomeRow, stored: StoredRow | undefined): boolean {
  return stored?.partition === outcome.partition && (outcome.seq === undefined || stored.seq === outcome.seq);
}

/** A backoff or hold further out than this is written as this (a DATETIME ends in 9999; 100 years is plenty). */
const MAX_DELAY_MS = 100 * 365 * 24 * 3_600_000;

/**
 * Writes the outcomes of several partitions in the caller's transaction (READ COMMITTED), each partition whole or
 * not at all.
 *
 * Fencing: the partitions rows that name me at my epoch are share-locked first, in partition order (with the count
 * the relay read with, only while the table has that count). A grant
 * (`FOR UPDATE SKIP LOCKED`) passes a locked partition over, and a release or reap waits for this transaction; one
 * that committed first changed the owner or epoch, which the locking read sees (it reads the latest version), so
 * the partition drops out and none of its rows is written.
 *
 * The rows are locked `FOR UPDATE SKIP LOCKED` by id: a row another session holds (an operator's transaction) is
 * not waited for, which would stall every partition of the completion behind it; a row still pending that was
 * passed over this way is reported in `skipped`. Only rows still pending and really in the partition are written
 * (a published row sent with its seq only if it has that seq; MariaDB still finds it by id, its unique index):
 * published rows deleted (or marked `published` when retained); failed rows count the attempt and get `due_at`
 * (their backoff) or are parked dead; held rows get `due_at` without an attempt (a null reason keeps the stored one).
 */
export async function completePartitions(tx: MysqlExecutor, job: CompletionJob): Promise<PartitionWritten[]> {
  const { names, completions, rows, retain } = job;
  const unclean = await lockFencedPartitions(tx, job);
  const wanted = rows.filter((row) => unclean.has(row.partition));
  const mine = new Map<string, StoredRow>();
  const skipped = new Map<number, string[]>();
  if (wanted.length > 0) {
    const ids = [...new Set(wanted.map((row) => row.id))];
    const lockedRows = await tx.query(`SELECT o.id, o.partition_no, o.seq FROM ${listedRows(names)} WHERE o.state = 'pending' FOR UPDATE SKIP LOCKED`, [
      JSON.stringify(ids),
    ]);
    for (const row of lockedRows.rows) mine.set(String(row.id), storedRow(row));
    const passed = ids.filter((id) => !mine.has(id));
    if (passed.length > 0) {
      const pending = await tx.query(`SELECT o.id, o.partition_no, o.seq FROM ${listedRows(names)} WHERE o.state = 'pending'`, [JSON.stringify(passed)]);
      const stored = new Map(pending.rows.map((row) => [String(row.id), storedRow(row)]));
      for (const row of wanted) {
        if (!isRowOf(row, stored.get(row.id))) continue;
        skipped.set(row.partition, [...(skipped.get(row.partition) ?? []), row.id]);
        stored.delete(row.id);
      }
    }
  }
  const writes = wanted.filter((row) => isRowOf(row, mine.get(row.id)));
  await writeOutcomes(tx, names, writes, retain);
  return partitionsWritten(completions, unclean, writes, skipped);
}

/**
 * Share-locks, in partition order, the partition rows of `completions` that name the relay at their epoch (with the
 * count the relay read with, only while the table has that count); returns each locked partition's `unclean`.
 */
export async function lockFencedPartitions(tx: MysqlExecutor, job: CompletionJob): Promise<ReadonlyMap<number, number>> {
  const { names, relayId, completions, partitionCount } = job;
  const sameCount = partitionCount === undefined ? '' : ` AND (SELECT c.partition_count FROM ${names.partitioning} c) = ?`;
  const locked = await tx.query(
    `SELECT partition_no, unclean FROM ${names.partitions} WHERE ${FENCED}${sameCount} ORDER BY partition_no LOCK IN SHARE MODE`,
    partitionCount === undefined ? fenceParams(relayId, completions) : [...fenceParams(relayId, completions), partitionCount],
  );
  return new Map(locked.rows.map((row) => [Number(row.partition_no), Number(row.unclean)]));
}

/** What each completion wrote, from the rows written and the partitions locked. */
export function partitionsWritten(
  completions: readonly PartitionCompletion[],
  unclean: ReadonlyMap<number, number>,
  writes: readonly OutcomeRow[],
  skipped: ReadonlyMap<number, string[]> = new Map(),
): PartitionWritten[] {
  const written = new Map<number, { ids: Set<string>; published: Set<string> }>();
  for (const row of writes) {
    let w = written.get(row.partition);
    if (w === undefined) written.set(row.partition, (w = { ids: new Set(), published: new Set() }));
    w.ids.add(row.id);
    if (row.kind === 'published') w.published.add(row.id);
  }
  return completions.map((c) => ({
    partition: c.partition,
    epoch: c.epoch,
    applied: unclean.has(c.partition),
    unclean: unclean.get(c.partition) ?? 0,
    published: written.get(c.partition)?.published.size ?? 0,
    changed: written.get(c.partition)?.ids.size ?? 0,
    skipped: skipped.get(c.partition) ?? [],
  }));
}

/** The writes of rows this transaction locked: one statement for the published, one per distinct schedule. */
async function writeOutcomes(tx: MysqlExecutor, names: MysqlTableNames, rows: readonly OutcomeRow[], retain: boolean): Promise<void> {
  const published = [...new Set(rows.filter((row) => row.kind === 'published').map((row) => row.id))];
  if (published.length > 0) {
    await tx.query(
      retain
        ? `UPDATE ${listedRows(names)} SET o.state = 'published', o.published_at = ${MYSQL_NOW}, o.due_at = NULL WHERE o.state = 'pending'`
        : `DELETE o FROM ${listedRows(names)} WHERE o.state = 'pending'`,
      [JSON.stringify(published)],
    );
  }
  const schedules = new Map<string, { row: OutcomeRow; ids: string[] }>();
  for (const row of rows) {
    if (row.kind === 'published') continue;
    const key = JSON.stringify([row.kind, row.delayMs, row.error]);
    const group = schedules.get(key);
    if (group === undefined) schedules.set(key, { row, ids: [row.id] });
    else group.ids.push(row.id);
  }
  for (const { row, ids } of schedules.values()) {
    const due = `TIMESTAMPADD(MICROSECOND, ? * 1000, ${MYSQL_NOW})`;
    const delay = Math.min(row.delayMs, MAX_DELAY_MS);
    const list = JSON.stringify(ids);
    if (row.kind === 'dead') {
      await tx.query(
        `UPDATE ${listedRows(names)} SET o.attempts = o.attempts + 1, o.last_error = ?, o.state = 'dead', o.dead_at = ${MYSQL_NOW}, o.due_at = NULL
        WHERE o.state = 'pending'`,
        [list, row.error],
      );
    } else if (row.kind === 'failed') {
      await tx.query(`UPDATE ${listedRows(names)} SET o.attempts = o.attempts + 1, o.last_error = ?, o.due_at = ${due} WHERE o.state = 'pending'`, [
        list,
        row.error,
        delay,
      ]);
    } else {
      await tx.query(`UPDATE ${listedRows(names)} SET o.last_error = COALESCE(?, o.last_error), o.due_at = ${due} WHERE o.state = 'pending'`, [
        list,
        row.error,
        delay,
      ]);
    }
  }
}
