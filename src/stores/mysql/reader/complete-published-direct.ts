import type { MysqlExecutor } from '../database.js';
import { MYSQL_NOW } from '../migrations.js';
import { quoteMysql } from '../table-names.js';
import { type CompletionJob, lockFencedPartitions, type OutcomeRow, partitionsWritten, type PartitionWritten } from './complete-partitions.js';

/** Thrown inside the transaction when the direct write cannot stand for the whole completion: it is rolled back whole. */
export class DirectCompletionMissed extends Error {
  constructor(readonly why: 'locked' | 'changed') {
    super(`the direct completion missed (${why}); the locking completion runs instead`);
  }
}

/** Whether a completion can be written directly: published rows only, each id once. */
export function canCompleteDirectly(rows: readonly OutcomeRow[]): boolean {
  return rows.every((row) => row.kind === 'published') && new Set(rows.map((row) => row.id)).size === rows.length;
}

/**
 * The usual completion (published rows only) written without locking each row first, in the caller's transaction
 * (READ COMMITTED): the partition rows are share-locked as `completePartitions` locks them, then one DELETE (or UPDATE
 * to `published` when retained) joins the listed rows by id and writes those still pending, in the partition named and,
 * when sent with a seq, with that seq. It never waits for a row lock (`innodb_lock_wait_timeout=0` for the statement
 * alone, MariaDB's `SET STATEMENT`), and it must write every listed row of the locked partitions: a row locked from
 * outside (or a deadlock over the rows), or one gone or changed, throws `DirectCompletionMissed`, the caller rolls the transaction back and runs
 * `completePartitions`, which skips the locked row and reports it. In the usual batch nothing else touches the rows, and
 * the statement saves the `SELECT ... FOR UPDATE SKIP LOCKED` that locked each row before (docs/design/dialects.md).
 */
export async function completePublishedDirect(tx: MysqlExecutor, job: CompletionJob): Promise<PartitionWritten[]> {
  const { names, completions, rows, retain } = job;
  const unclean = await lockFencedPartitions(tx, job);
  const writes = rows.filter((row) => unclean.has(row.partition));
  if (writes.length > 0) {
    const listed = `JSON_TABLE(?, '$[*]' COLUMNS (id VARCHAR(36) CHARACTER SET ascii COLLATE ascii_bin PATH '$[0]', p INT PATH '$[1]',
        seq BIGINT UNSIGNED PATH '$[2]')) AS j
      STRAIGHT_JOIN ${names.outbox} AS o FORCE INDEX (${quoteMysql(`${names.table}_id_key`)}) ON o.id = j.id`;
    const matches = `o.state = 'pending' AND o.partition_no = j.p AND (j.seq IS NULL OR o.seq = j.seq)`;
    const write = retain
      ? `UPDATE ${listed} SET o.state = 'published', o.published_at = ${MYSQL_NOW}, o.due_at = NULL WHERE ${matches}`
      : `DELETE o FROM ${listed} WHERE ${matches}`;
    const list = JSON.stringify(writes.map((row) => [row.id, row.partition, row.seq ?? null]));
    let written: number;
    try {
      written = (await tx.query(`SET STATEMENT innodb_lock_wait_timeout = 0 FOR ${write}`, [list])).affectedRows;
    } catch (error) {
      // a row lock not granted at once, or (in principle) a deadlock over the rows: the locking completion skips such rows
      const code = (error as { code?: unknown } | null)?.code;
      if (code === 'ER_LOCK_WAIT_TIMEOUT' || code === 'ER_LOCK_DEADLOCK') throw new DirectCompletionMissed('locked');
      throw error;
    }
    if (written !== writes.length) throw new DirectCompletionMissed('changed');
  }
  return partitionsWritten(completions, unclean, writes);
}
