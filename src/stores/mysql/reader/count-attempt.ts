import type { PartitionLease } from '../../../core/ports.js';
import type { MysqlExecutor } from '../database.js';
import { FENCED, fenceParams } from '../leases/lease-fence.js';
import type { MysqlTableNames } from '../table-names.js';

/**
 * Counts an attempt before a publish (`attempts + 1`), in the caller's transaction, fenced like a completion: the
 * partition row must name the relay at the epoch, and stays share-locked until the update commits.
 */
export async function countAttempt(
  tx: MysqlExecutor,
  names: MysqlTableNames,
  relayId: string,
  lease: Pick<PartitionLease, 'partition' | 'epoch'>,
  id: string,
): Promise<boolean> {
  const locked = await tx.query(`SELECT partition_no FROM ${names.partitions} WHERE ${FENCED} LOCK IN SHARE MODE`, fenceParams(relayId, [lease]));
  if (locked.rows.length === 0) return false;
  const counted = await tx.query(`UPDATE ${names.outbox} SET attempts = attempts + 1 WHERE id = ? AND state = 'pending' AND partition_no = ?`, [
    id,
    lease.partition,
  ]);
  return counted.affectedRows === 1;
}

/**
 * After a completion published in partitions whose `unclean` count is above 0 (their owners kept dying): the
 * partition made progress, so the count goes back to 0, fenced. A statement of its own after the completion
 * committed, so the completion never upgrades its share lock (two completions of one partition would deadlock).
 */
export async function resetUnclean(
  executor: MysqlExecutor,
  names: MysqlTableNames,
  relayId: string,
  leases: readonly Pick<PartitionLease, 'partition' | 'epoch'>[],
): Promise<void> {
  if (leases.length === 0) return;
  await executor.query(`UPDATE ${names.partitions} SET unclean = 0 WHERE ${FENCED} AND unclean > 0`, fenceParams(relayId, leases));
}
