import type { HeldPartition, PartitionLease } from '../ports.js';
import { newOwner, type Settlement } from '../partitions/settlement.js';
import type { UnwrittenOutcome } from './unwritten-outcomes.js';

/**
 * What a relay keeps in memory about one partition it holds. The object's identity is the grant: a partition
 * dropped and adopted again gets a new entry, so a reply that was sent for the old one can tell it is stale.
 */
export interface PartitionEntry {
  readonly partition: number;
  readonly epoch: string;
  /** Takeovers from dead owners since the partition last made progress; `>= UNCLEAN_LIMIT` publishes one row at a time. */
  unclean: number;
  /** Announced as draining: not read again, released once its work ended. */
  draining: boolean;
  /** Where the next read starts, and the ranges to recheck below it. */
  settlement: Settlement;
  /** Outcomes the store skipped (another session locked the row), by id: written again from `unwrittenRetryAt` on. */
  readonly unwritten: Map<string, UnwrittenOutcome>;
  unwrittenRetryAt: number;
  /** Monotonic ms of its last read: a read takes the partitions read least recently first. */
  readAt: number;
  /** Its last read came back full: it has more rows waiting (`planRead`). */
  backlog: boolean;
}

/** A partition whose owners died this many times in a row publishes one row at a time, each after a counted attempt. */
export const UNCLEAN_LIMIT = 3;

export function adoptEntry(lease: PartitionLease & { readonly state?: HeldPartition['state'] }): PartitionEntry {
  return {
    partition: lease.partition,
    epoch: lease.epoch,
    unclean: lease.unclean,
    draining: lease.state === 'draining',
    settlement: newOwner,
    unwritten: new Map(),
    unwrittenRetryAt: 0,
    readAt: 0,
    backlog: false,
  };
}

/** What to change in memory so that it matches the partitions the database says I hold. */
export interface Reconciliation {
  /** Held in memory but no longer mine at that epoch: drop them and everything of them. */
  readonly drop: readonly number[];
  /** Mine in the database but not in memory (a grant whose reply was lost or timed out): adopt them. */
  readonly adopt: readonly HeldPartition[];
}

export function reconcile(book: ReadonlyMap<number, PartitionEntry>, owned: readonly HeldPartition[]): Reconciliation {
  const byPartition = new Map(owned.map((held) => [held.partition, held]));
  const drop = [...book.values()].filter((entry) => byPartition.get(entry.partition)?.epoch !== entry.epoch).map((entry) => entry.partition);
  const adopt = owned.filter((held) => !book.has(held.partition));
  return { drop, adopt };
}

/** The partitions a fair-share step sees: those it publishes, and those it is draining. */
export function ownPartitions(book: ReadonlyMap<number, PartitionEntry>): { owned: number[]; draining: number[] } {
  const entries = [...book.values()];
  return { owned: entries.filter((e) => !e.draining).map((e) => e.partition), draining: entries.filter((e) => e.draining).map((e) => e.partition) };
}
