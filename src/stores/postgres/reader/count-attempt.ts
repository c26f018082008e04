import type { ReaderStatement } from './reader-tables.js';

/**
 * Counts an attempt before a publish (`attempts + 1`), fenced like a completion: the partition row must name
 * relay `$1` at epoch `$3`, and is share-locked until the update commits (see `complete-partitions.ts`).
 */
export const countAttempt: ReaderStatement<[relayId: string, partition: number, epoch: string, id: string]> = {
  sql: ({ outbox, partitions, partitioning, partitionOf }) => `UPDATE ${outbox} o SET attempts = o.attempts + 1
    FROM (
      SELECT p.partition FROM ${partitions} p
      WHERE p.partition = $2::int AND p.epoch = $3::int8 AND p.owner = $1::uuid
      FOR SHARE OF p
    ) l, ${partitioning} c
    WHERE o.id = $4::uuid AND o.state = 'pending' AND ${partitionOf('o', 'c.partition_count')} = l.partition`,
  params: (relayId, partition, epoch, id) => [relayId, partition, epoch, id],
};
