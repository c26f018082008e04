import { checkPublishedSeqs } from '../../shared/partition-read-checks.js';
import type { PartitionCompletion } from '../../../core/ports.js';
import type { SqliteTableNames } from '../table-names.js';

/**
 * The statements of a fenced completion, all in one `BEGIN IMMEDIATE` write: `lease` first finds the partition
 * row naming me at my epoch; only then are that partition's outcomes written, each only to a row still pending and
 * really in that partition. One writer at a time means no grant, release or reap can come between the check and
 * the writes, and no other session holds a row lock to skip (`skipped` is always empty).
 */
export interface SqliteCompleteStatements {
  /**
   * `{ partition, epoch, relayId, count }` -> `unclean` when the partition is mine at that epoch and, when `count` is
   * not null (the count the relay read with), the table has that many partitions.
   */
  readonly lease: string;
  /** `{ id, partition, now }`: deletes the row, or marks it published when the store retains published rows. */
  readonly publish: string;
  /** `{ seq, id, partition, now }`: the same, for the row with that seq (its rowid) and that id. */
  readonly publishSeq: string;
  /** `{ id, partition, now, delayMs, error }`: `attempts + 1`, scheduled after the backoff. */
  readonly fail: string;
  /** `{ id, partition, now, error }`: `attempts + 1`, parked dead. */
  readonly dead: string;
  /** `{ id, partition, now, delayMs, error }`: scheduled without an attempt; a null reason keeps the stored one. */
  readonly hold: string;
  /** `{ partition }`: the partition made progress, its count of unclean takeovers goes back to 0. */
  readonly resetUnclean: string;
  /** `{ id, partition, epoch, relayId }`: `attempts + 1` before a publish, fenced like a completion. */
  readonly countAttempt: string;
}

export function sqliteCompleteStatements({ outbox, partitions, partitioning }: SqliteTableNames, retainPublished: boolean): SqliteCompleteStatements {
  const row = `WHERE id = @id AND partition_no = @partition AND state = 'pending'`;
  const publish = (where: string) =>
    retainPublished ? `UPDATE ${outbox} SET state = 'published', published_at = @now, due_at = NULL ${where}` : `DELETE FROM ${outbox} ${where}`;
  return Object.freeze({
    lease: `SELECT unclean FROM ${partitions} WHERE partition_no = @partition AND epoch = CAST(@epoch AS INTEGER) AND owner = @relayId
      AND (@count IS NULL OR (SELECT partition_count FROM ${partitioning}) = @count)`,
    publish: publish(row),
    publishSeq: publish(`WHERE seq = CAST(@seq AS INTEGER) AND id = @id AND partition_no = @partition AND state = 'pending'`),
    fail: `UPDATE ${outbox} SET attempts = attempts + 1, last_error = @error, due_at = @now + @delayMs ${row}`,
    dead: `UPDATE ${outbox} SET attempts = attempts + 1, last_error = @error, state = 'dead', dead_at = @now, due_at = NULL ${row}`,
    hold: `UPDATE ${outbox} SET last_error = COALESCE(@error, last_error), due_at = @now + @delayMs ${row}`,
    resetUnclean: `UPDATE ${partitions} SET unclean = 0 WHERE partition_no = @partition AND unclean > 0`,
    countAttempt: `UPDATE ${outbox} SET attempts = attempts + 1 ${row}
      AND EXISTS (SELECT 1 FROM ${partitions} p WHERE p.partition_no = @partition AND p.epoch = CAST(@epoch AS INTEGER) AND p.owner = @relayId)`,
  });
}

/** The seq of each published id (`publishedSeqs`), normalized, or `undefined` each without them; refused unless one valid seq per id. */
export function publishedSeqs(relayId: string, completion: PartitionCompletion): (string | undefined)[] {
  const seqs = checkPublishedSeqs(relayId, completion);
  return seqs === undefined ? completion.published.map(() => undefined) : [...seqs];
}
