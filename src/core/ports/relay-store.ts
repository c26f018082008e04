import type { PartitionReader } from './partition-reader.js';
import type { RelayLeases } from './relay-leases.js';

/**
 * The relay's role: its partition leases and reader, and housekeeping.
 *
 * Contract: each purge deletes at most `limit` rows and only what the store's retention settings allow, and
 * returns how many it deleted.
 */
export interface RelayStore {
  /** Who holds which partition (`RelayLeases`: join, beat, acquire, release, leave). */
  readonly leases: RelayLeases;
  /** Reads the held partitions and writes each outcome, fenced by the partition's epoch (`PartitionReader`). */
  readonly reader: PartitionReader;
  /** Deletes at most `limit` published messages whose retention has run out (none when rows are deleted at once). */
  purgePublished(limit: number): Promise<number>;
  /** Forgets at most `limit` idempotency keys older than the store's idempotency window. */
  purgeIdempotencyKeys(limit: number): Promise<number>;
}
