import type { ReaderStatement } from './reader-tables.js';

/**
 * After a completion published in partitions whose `unclean` count is above 0 (their owners kept dying), the
 * partition made progress: the count goes back to 0, fenced like the completion.
 *
 * A statement of its own, after the completion committed, and rarely run: upgrading the completion's share lock
 * to an update lock inside it could deadlock with a second completion of the same partition holding its share
 * lock too. Here the rows are locked once, in partition order like the completion, and grants skip them.
 */
export const resetUnclean: ReaderStatement<[relayId: string, partitions: readonly number[], epochs: readonly string[]]> = {
  sql: ({ partitions }) => `UPDATE ${partitions} p SET unclean = 0
    FROM (
      SELECT q.partition FROM ${partitions} q
      JOIN unnest($2::int[], $3::int8[]) AS c(partition, epoch) ON q.partition = c.partition AND q.epoch = c.epoch
      WHERE q.owner = $1::uuid AND q.unclean > 0
      ORDER BY q.partition
      FOR NO KEY UPDATE OF q
    ) l
    WHERE p.partition = l.partition`,
  params: (relayId, partitions, epochs) => [relayId, partitions, epochs],
};
