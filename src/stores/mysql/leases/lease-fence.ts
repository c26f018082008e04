import type { PartitionLease } from '../../../core/ports.js';

/**
 * The fence every write under a lease carries: the partition row names the caller as owner at the given epoch.
 * `partition_no IN (?)` keeps the statement on the primary key (InnoDB locks the rows a locking statement scans,
 * so a scan of the whole table would lock every partition); the pairs compare as text, exactly at any epoch.
 */
export const FENCED = `partition_no IN (?) AND owner = ? AND CONCAT(partition_no, ':', epoch) IN (?)`;

/** The parameters of `FENCED`, in placeholder order (a list is never empty: mysql2 would write `IN ()`). */
export function fenceParams(relayId: string, leases: readonly Pick<PartitionLease, 'partition' | 'epoch'>[]): unknown[] {
  return [leases.map((l) => l.partition), relayId, leases.map((l) => `${String(l.partition)}:${String(l.epoch)}`)];
}
