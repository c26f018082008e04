import type { PartitionReadOutcome, PartitionReadRequest, PartitionReadResult } from '../ports.js';
import { afterRead, type PendingRange, recheckRange, type Settlement } from '../partitions/settlement.js';
import type { PartitionEntry } from './partition-book.js';

/** A read request and the recheck range it carries, in bigint, to fold the answer with. */
export interface SentRead {
  readonly request: PartitionReadRequest;
  readonly recheck: PendingRange | null;
}

/** What to ask for one partition: fresh rows after its position, and the oldest range that may be settled. */
export function readRequest(entry: PartitionEntry, limit: number): SentRead {
  const { settlement } = entry;
  const recheck = recheckRange(settlement);
  const request: PartitionReadRequest = {
    partition: entry.partition,
    epoch: entry.epoch,
    after: settlement.position === null ? null : settlement.position.toString(),
    recheck: recheck === null ? null : { from: recheck.from === null ? null : recheck.from.toString(), to: recheck.to.toString(), tag: recheck.tag.toString() },
    limit,
  };
  return { request, recheck };
}

/**
 * Folds one partition's answer into its settlement. The store speaks decimal strings; the settlement bigint.
 * A read that passed no fresh row anywhere has no tag (`null`): no range is pushed then, and the newest known
 * tag stands in for it, so the restore check (a tag going backwards) cannot fire on a tag that was never drawn.
 */
export function foldRead(settlement: Settlement, sent: SentRead, outcome: PartitionReadOutcome, result: Pick<PartitionReadResult, 'horizon' | 'tag'>): Settlement {
  const xmin = BigInt(result.horizon);
  const reached = outcome.reached === null ? null : BigInt(outcome.reached);
  if (reached !== null && result.tag === null) {
    throw new Error(`read of partition ${outcome.partition} returned fresh rows up to ${outcome.reached} without a tag; the store breaks the PartitionReader contract`);
  }
  const tag = result.tag !== null ? BigInt(result.tag) : (settlement.ranges.at(-1)?.tag ?? xmin);
  const recheck = sent.recheck !== null && outcome.recheck?.applied === true
    ? { range: sent.recheck, last: outcome.recheck.last === null ? null : BigInt(outcome.recheck.last), full: outcome.recheck.full }
    : undefined;
  return afterRead(settlement, { xmin, tag, reached, ...(recheck === undefined ? {} : { recheck }) });
}
