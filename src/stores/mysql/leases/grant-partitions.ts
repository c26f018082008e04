import type { PartitionLease } from '../../../core/ports.js';
import { MYSQL_NOW } from '../migrations.js';
import type { MysqlExecutor } from '../database.js';
import type { MysqlTableNames } from '../table-names.js';

/**
 * Inside the acquire's transaction, after the reap: grants up to `max` free partitions to the relay, lowest first,
 * each with its epoch raised by one.
 *
 * - The grantee must be alive and not leaving; its row is share-locked until the grant commits, so a reap of it
 *   waits and then frees these grants too, or came first and left no row to lock (nothing is granted).
 * - Nothing is granted while a resize waits, or from another generation.
 * - The pick is a locking read (the latest row versions, never the snapshot): a partition another acquire granted
 *   meanwhile is no longer `owner IS NULL`. `SKIP LOCKED` passes over partitions another acquire, a release, a
 *   reap or a fenced completion holds right now. It walks the primary key in order (`FORCE INDEX`): InnoDB locks
 *   the rows it reads, and a sort over the `owner` index would lock every free partition, not just the `max`
 *   taken, making concurrent acquires skip partitions nobody takes.
 */
export async function grantPartitions(tx: MysqlExecutor, names: MysqlTableNames, relayId: string, max: number): Promise<PartitionLease[]> {
  if (max === 0) return [];
  const me = await tx.query(`SELECT relay_id FROM ${names.relays} WHERE relay_id = ? AND expires_at > ${MYSQL_NOW} AND leaving = 0 LOCK IN SHARE MODE`, [
    relayId,
  ]);
  if (me.rows.length === 0) return [];
  const config = await tx.query(`SELECT generation FROM ${names.partitioning} WHERE resize_to IS NULL`);
  const generation = config.rows[0]?.generation;
  if (generation === undefined) return [];
  const picked = await tx.query(
    `SELECT partition_no, CAST(epoch AS CHAR) AS epoch, unclean FROM ${names.partitions} FORCE INDEX (PRIMARY)
      WHERE owner IS NULL AND generation = ? ORDER BY partition_no LIMIT ? FOR UPDATE SKIP LOCKED`,
    [Number(generation), max],
  );
  if (picked.rows.length === 0) return [];
  const partitions = picked.rows.map((row) => Number(row.partition_no));
  await tx.query(`UPDATE ${names.partitions} SET owner = ?, state = 'owned', epoch = epoch + 1, granted_at = ${MYSQL_NOW} WHERE partition_no IN (?)`, [
    relayId,
    partitions,
  ]);
  return picked.rows.map((row) => ({
    partition: Number(row.partition_no),
    epoch: (BigInt(String(row.epoch)) + 1n).toString(),
    unclean: Number(row.unclean),
  }));
}
