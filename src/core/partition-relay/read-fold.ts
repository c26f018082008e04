import type { PartitionMessage, PartitionReadOutcome, PartitionReadRequest, PartitionReadResult } from '../ports.js';
import { afterRead, type PendingRange, recheckRange, type Settlement } from '../partitions/settlement.js';
import type { PartitionEntry } from './partition-book.js';
import { cameBackFull, rowsByBranch } from './read-plan.js';

/** A read request and the recheck range it carries, in bigint, to fold the answer with. */
export interface SentRead {
  readonly request: PartitionReadRequest;
  readonly recheck: PendingRange | null;
}

/**
 * Where a read's fresh rows start: the start of the oldest range not yet settled, or the position when all are.
 *
 * Reading from the position, as the design first had it, loses key order: a row R of key k commits late below
 * the position, its writer then commits a later row of k above it, and a read whose horizon has not reached
 * the range's tag returns the later row fresh while skipping R's recheck; R goes out after it. Once R has
 * committed it is visible to that read, so starting the fresh rows at the oldest unsettled seq returns R
 * first, in the same key chain. Rows already published below the position are deleted, so the rescan only
 * walks their dead index entries, and only until the range settles (usually the next read).
 */
export function readFrom(settlement: Settlement): bigint | null {
  const oldest = settlement.ranges[0];
  return oldest === undefined ? settlement.position : oldest.from;
}

/**
 * What to ask for one partition: fresh rows from its oldest unsettled seq (`readFrom`), and the oldest range, whose
 * recheck the store caps at `after` (so it returns no row twice) and reports as settled or not.
 */
export function readRequest(entry: PartitionEntry, limit: number): SentRead {
  const { settlement } = entry;
  const recheck = recheckRange(settlement);
  const from = readFrom(settlement);
  const request: PartitionReadRequest = {
    partition: entry.partition,
    epoch: entry.epoch,
    after: from === null ? null : from.toString(),
    recheck: recheck === null ? null : { from: recheck.from === null ? null : recheck.from.toString(), to: recheck.to.toString(), tag: recheck.tag.toString() },
    limit,
  };
  return { request, recheck };
}

/**
 * Folds one partition's answer into its settlement. The store speaks decimal strings; the settlement bigint.
 * A settled range is done once the fresh rows covered it: they start at or below it, so unless they filled the
 * take below its end, every row of it that committed was returned. A read that passed no fresh row anywhere
 * has no tag (`null`): no range is pushed then, and the newest known tag stands in for it, so the restore check
 * (a tag going backwards) cannot fire on a tag that was never drawn.
 */
export function foldRead(
  settlement: Settlement,
  sent: SentRead,
  outcome: PartitionReadOutcome,
  result: Pick<PartitionReadResult, 'horizon' | 'tag'>,
  freshCount: number,
): Settlement {
  const xmin = BigInt(result.horizon);
  const reached = outcome.reached === null ? null : BigInt(outcome.reached);
  if (reached !== null && result.tag === null) {
    throw new Error(
      `read of partition ${outcome.partition} returned fresh rows up to ${outcome.reached} without a tag; the store breaks the PartitionReader contract`,
    );
  }
  const tag = result.tag !== null ? BigInt(result.tag) : (settlement.ranges.at(-1)?.tag ?? xmin);
  const range = sent.recheck;
  const cut = freshCount >= sent.request.limit && reached !== null && range !== null && reached < range.to;
  const recheck = range !== null && outcome.recheck?.applied === true ? { range, last: cut ? reached : null, full: cut } : undefined;
  return afterRead(settlement, { xmin, tag, reached, ...(recheck === undefined ? {} : { recheck }) });
}

/**
 * Folds a whole read into the partitions it was sent for and returns the messages to publish. A partition whose
 * memory is no longer the one the read was sent for (dropped, or adopted again after a lapse) is left alone, and
 * its rows are not returned: a read sent before a lapse must not move the position of a partition adopted after it.
 */
export function foldReadResult(
  sent: ReadonlyMap<number, { readonly entry: PartitionEntry; readonly read: SentRead }>,
  result: PartitionReadResult,
  current: (partition: number) => PartitionEntry | undefined,
  readAt: number,
): PartitionMessage[] {
  const counts = rowsByBranch(result.messages);
  for (const outcome of result.partitions) {
    const asked = sent.get(outcome.partition);
    if (asked === undefined || current(outcome.partition) !== asked.entry) continue;
    const rows = counts.get(outcome.partition);
    asked.entry.settlement = foldRead(asked.entry.settlement, asked.read, outcome, result, rows?.fresh ?? 0);
    asked.entry.readAt = readAt;
    asked.entry.backlog = cameBackFull(rows, asked.read.request.limit);
  }
  return result.messages.filter((m) => current(m.partition) === sent.get(m.partition)?.entry);
}
