import type { LeaseStatement } from './lease-tables.js';

type GiveBack = LeaseStatement<[relayId: string, partitions: readonly number[], epochs: readonly string[]]>;

/** Each partition changes only while it names `$1` as owner at the given epoch: a stale caller changes nothing. */
const fenced = `FROM unnest($2::int[], $3::int8[]) AS l(partition, epoch)
    WHERE p.partition = l.partition AND p.epoch = l.epoch AND p.owner = $1::uuid`;

/** Announces that the owner will release these partitions once their work ended (informational for others). */
export const drainPartitions: GiveBack = {
  sql: ({ partitions }) => `UPDATE ${partitions} p SET state = 'draining' ${fenced} AND p.state = 'owned'`,
  params: (relayId, partitions, epochs) => [relayId, partitions, epochs],
};

/** Frees the owner's partitions, owned or draining. The epoch stays: the next grant raises it. */
export const releasePartitions: GiveBack = {
  sql: ({ partitions }) => `UPDATE ${partitions} p SET owner = NULL, state = 'free' ${fenced}`,
  params: (relayId, partitions, epochs) => [relayId, partitions, epochs],
};
