import type { PartitionLease } from '../../../core/ports.js';
import type { MysqlExecutor } from '../database.js';
import type { MysqlTableNames } from '../table-names.js';
import { FENCED, fenceParams } from './lease-fence.js';

type Leases = readonly Pick<PartitionLease, 'partition' | 'epoch'>[];

/** Announces that the owner will release these partitions once their work ended (informational for others). */
export async function drainPartitions(executor: MysqlExecutor, names: MysqlTableNames, relayId: string, leases: Leases): Promise<number> {
  if (leases.length === 0) return 0;
  const sql = `UPDATE ${names.partitions} SET state = 'draining' WHERE ${FENCED} AND state = 'owned'`;
  return (await executor.query(sql, fenceParams(relayId, leases))).affectedRows;
}

/** Frees the owner's partitions, owned or draining. The epoch stays: the next grant raises it. */
export async function releasePartitions(executor: MysqlExecutor, names: MysqlTableNames, relayId: string, leases: Leases): Promise<number> {
  if (leases.length === 0) return 0;
  const sql = `UPDATE ${names.partitions} SET owner = NULL, state = 'free' WHERE ${FENCED}`;
  return (await executor.query(sql, fenceParams(relayId, leases))).affectedRows;
}
