/**
 * Where a relay reads one partition, and which ranges below that it must read once more.
 *
 * A row with a lower `seq` can commit after a read has passed it (its transaction drew the seq earlier and
 * committed later). Reads therefore leave behind the range they passed, tagged with a transaction id drawn
 * after the read's snapshot; once the database's snapshot `xmin` reaches the tag, every transaction that
 * could still have put a row in that range has ended, and one recheck of the range finds all of them. The
 * proof (and why the tag is not the snapshot's `xmax`) is in docs/design/read-path.md, "Late commits".
 *
 * Sequence numbers and transaction ids are 64-bit (they arrive as text): bigint throughout. Pure: the relay
 * passes in what each read returned.
 */

/** `(from, to]` in seq; `from = null` is the start of the partition. */
export interface SeqRange {
  readonly from: bigint | null;
  readonly to: bigint;
}

/** A range passed by a fresh read, to be rechecked once the horizon reaches `tag`. */
export interface PendingRange extends SeqRange {
  readonly tag: bigint;
}

export interface Settlement {
  /** The highest seq a fresh read returned; `null`: read from the start (a new owner). */
  readonly position: bigint | null;
  /** Oldest first, contiguous: each range starts where the one before ends, the last ends at `position`. */
  readonly ranges: readonly PendingRange[];
  /** The newest snapshot `xmin` seen: every transaction below it has ended. */
  readonly horizon: bigint | null;
}

/** What one read of the partition returned. */
export interface ReadResult {
  /** The read's snapshot xmin (`pg_snapshot_xmin`). */
  readonly xmin: bigint;
  /** A transaction id assigned after the read's snapshot was taken (`pg_current_xact_id()` in the read). */
  readonly tag: bigint;
  /** The highest seq the fresh branch returned, `null` if it returned nothing. */
  readonly reached: bigint | null;
  /**
   * The recheck sent with this read (from `recheckRange`) and how far it got. It counts only if the read's
   * xmin reached its tag; otherwise the statement skipped it and the range stays.
   */
  readonly recheck?: {
    readonly range: PendingRange;
    /** The highest seq it returned, `null` if none. */
    readonly last: bigint | null;
    /** It returned as many rows as it was allowed: the rest of the range is still to be read. */
    readonly full: boolean;
  };
}

export const DEFAULT_MAX_RANGES = 64;

/** A partition the relay just acquired: read everything, from the start. */
export const newOwner: Settlement = Object.freeze({ position: null, ranges: Object.freeze([]), horizon: null });

/**
 * The range to send with the next read: the oldest range, merged with the ranges after it that the known
 * horizon has already settled (they are contiguous). The read rechecks it only if its own snapshot's xmin
 * has reached the returned `tag` (`pg_snapshot_xmin(snap) >= tag` in the statement), so a late commit goes
 * out in the first read after it, not the second.
 */
export function recheckRange(state: Settlement): PendingRange | null {
  const [oldest, ...rest] = state.ranges;
  if (oldest === undefined) return null;
  let merged: PendingRange = oldest;
  for (const range of rest) {
    if (state.horizon === null || range.tag > state.horizon) break;
    merged = { from: merged.from, to: range.to, tag: range.tag };
  }
  return merged;
}

/**
 * Folds one read into the state: the part of a settled recheck that was read is done (a full recheck leaves the rest,
 * still settled, in front), the fresh rows passed push one range, the oldest ranges merge beyond
 * `maxRanges`. An xmin or tag lower than one already seen means another cluster (a restore): start over.
 */
export function afterRead(state: Settlement, read: ReadResult, maxRanges = DEFAULT_MAX_RANGES): Settlement {
  const newestTag = state.ranges.at(-1)?.tag;
  if ((state.horizon !== null && read.xmin < state.horizon) || (newestTag !== undefined && read.tag < newestTag)) {
    return { ...newOwner, horizon: read.xmin };
  }
  let ranges = [...state.ranges];
  if (read.recheck !== undefined && read.recheck.range.tag <= read.xmin) ranges = afterRecheck(ranges, read.recheck);
  let position = state.position;
  if (read.reached !== null && (position === null || read.reached > position)) {
    ranges.push({ from: position, to: read.reached, tag: read.tag });
    position = read.reached;
  }
  while (ranges.length > Math.max(1, maxRanges)) {
    const [oldest, next, ...rest] = ranges as [PendingRange, PendingRange, ...PendingRange[]];
    ranges = [{ from: oldest.from, to: next.to, tag: next.tag }, ...rest];
  }
  const horizon = state.horizon === null || read.xmin > state.horizon ? read.xmin : state.horizon;
  return { position, ranges, horizon };
}

function afterRecheck(ranges: PendingRange[], recheck: NonNullable<ReadResult['recheck']>): PendingRange[] {
  const covered = ranges.filter((range) => range.to <= recheck.range.to);
  const rest = ranges.filter((range) => range.to > recheck.range.to);
  const lastCovered = covered.at(-1);
  if (!recheck.full || lastCovered === undefined) return rest;
  const from = recheck.last ?? recheck.range.from;
  if (from !== null && from >= recheck.range.to) return rest;
  return [{ from, to: recheck.range.to, tag: lastCovered.tag }, ...rest];
}
