import { MAX_TAKE, type PartitionMessage } from '../ports.js';
import { type PartitionEntry, UNCLEAN_LIMIT } from './partition-book.js';

/** Each partition's read takes at least this many rows per branch, however many partitions share the batch size. */
export const MIN_TAKE = 16;

/** One partition of a read, and the most rows each of its branches may return. */
export interface ReadShare {
  readonly entry: PartitionEntry;
  readonly limit: number;
}

export interface ReadPlanSettings {
  readonly batchSize: number;
  readonly lanes: number;
}

/**
 * Which idle partitions one read covers (docs/design/relay-loop.md). Quiet partitions (their last read
 * came back short) are all read, so a wake-up or a poll sees every partition in one statement. Partitions with a
 * backlog (their last read came back full) are read a lane's share at a time, least recently read first, and split
 * the batch size among them: the next share is read while this one publishes, so the database and the broker
 * work at once. No partition's branch takes more than `MAX_TAKE` rows, whatever the batch size. A partition whose owners keep dying (`unclean`) reads one row at a time.
 */
export function planRead(held: readonly PartitionEntry[], isBusy: (partition: number) => boolean, settings: ReadPlanSettings): ReadShare[] {
  const reading = held.filter((e) => !e.draining);
  const idle = reading.filter((e) => !isBusy(e.partition));
  const quiet = idle.filter((e) => !e.backlog);
  const share = Math.ceil(reading.filter((e) => e.backlog).length / settings.lanes);
  const backlogged = idle
    .filter((e) => e.backlog)
    .sort((a, b) => a.readAt - b.readAt)
    .slice(0, share);
  const take = (count: number) => Math.min(MAX_TAKE, Math.max(MIN_TAKE, Math.ceil(settings.batchSize / Math.max(1, count))));
  const quietTake = backlogged.length > 0 ? MIN_TAKE : take(quiet.length);
  const limitOf = (entry: PartitionEntry, limit: number) => (entry.unclean >= UNCLEAN_LIMIT ? 1 : limit);
  return [
    ...backlogged.map((entry) => ({ entry, limit: limitOf(entry, take(backlogged.length)) })),
    ...quiet.map((entry) => ({ entry, limit: limitOf(entry, quietTake) })),
  ];
}

/** How many rows each branch of a read returned, per partition. */
export interface BranchCounts {
  fresh: number;
  due: number;
  recheck: number;
}

/** Counts a read's rows per partition and branch, in one pass over them. */
export function rowsByBranch(messages: readonly PartitionMessage[]): Map<number, BranchCounts> {
  const counts = new Map<number, BranchCounts>();
  for (const m of messages) {
    let seen = counts.get(m.partition);
    if (seen === undefined) counts.set(m.partition, (seen = { fresh: 0, due: 0, recheck: 0 }));
    seen[m.source]++;
  }
  return counts;
}

/** Whether a partition has more rows than its read returned: one of its branches came back full. */
export function cameBackFull(counts: BranchCounts | undefined, limit: number): boolean {
  return counts !== undefined && (counts.fresh >= limit || counts.due >= limit || counts.recheck >= limit);
}

/** Whether a partition with a backlog waits for a read: then the next lane's share is read at once. */
export function hasIdleBacklog(held: Iterable<PartitionEntry>, isBusy: (partition: number) => boolean): boolean {
  for (const entry of held) if (entry.backlog && !entry.draining && !isBusy(entry.partition)) return true;
  return false;
}
