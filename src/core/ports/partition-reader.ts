import type { OutboxMessage } from '../message.js';
import type { DestinationPause, TopicPause } from './outbox-operator.js';
import type { PartitionLease } from './relay-leases.js';

/** A message whose publish failed, with what to do about it. */
export type FailedMessage =
  { readonly id: string; readonly error: string; readonly retryInMs: number } | { readonly id: string; readonly error: string; readonly dead: true };

/** A range of seq passed by an earlier read, `(from, to]`, to read once more when the horizon reaches `tag`. */
export interface RecheckRange {
  /** `null`: from the start of the partition. */
  readonly from: string | null;
  readonly to: string;
  readonly tag: string;
}

/** What to read in one partition I own. Seqs and tags are decimal strings (64-bit in the store). */
export interface PartitionReadRequest extends Pick<PartitionLease, 'partition' | 'epoch'> {
  /** Fresh rows have a seq above this; `null` reads the partition from its start (a new owner). */
  readonly after: string | null;
  /** Read again only if the read's own horizon has reached `recheck.tag`; otherwise skipped and reported so. */
  readonly recheck: RecheckRange | null;
  /**
   * This many rows per branch (fresh, recheck, due) when that many are there, never more: 1 to `MAX_TAKE` (1,000). A
   * branch that returns fewer had no more rows, which is how the relay knows it has read a range to its end.
   */
  readonly limit: number;
}

/** The most rows a read may ask of one branch of one partition: a store's statements are planned for no more. */
export const MAX_TAKE = 1000;

/** A pending message returned by a read. `attempts` counts this publish (stored attempts + 1). */
export interface PartitionMessage extends OutboxMessage {
  readonly partition: number;
  /** Which branch found it: above the position, in a settled recheck range, or scheduled (`due_at`) and due now. */
  readonly source: 'fresh' | 'recheck' | 'due';
  /**
   * The nearest earlier pending row of the same key that is scheduled (backoff, hold or delay; due or not),
   * or `null`. A message that waits must not be published before that row; the relay publishes it right after
   * the row in the same batch, or writes a hold on it (`PartitionCompletion.held`) for `dueInMs`. The nearest,
   * so that no other scheduled row of the key lies between the two: a chain of such links is in key order.
   */
  readonly waitsFor: { readonly seq: string; readonly dueInMs: number } | null;
}

/**
 * How a read shares its due branch (fan-out). `dueDestinations`: the due branch runs once per destination named
 * (`default`: the rows without one), each taking up to the partition's limit of its own due rows in seq order, and
 * the due rows of destinations not named are not returned. One destination's backlog (held through an outage, then
 * due at once) therefore never crowds another destination's retries out of the branch, and a relay leaves out the
 * destinations it holds paused by not naming them. Absent: one due branch over every destination. Fresh and
 * rechecked rows are returned whatever their destination (the position must pass them). Names as
 * `checkDestinationFilter` takes them (letters, digits, `_`, `-`).
 */
export interface PartitionReadOptions {
  readonly dueDestinations?: readonly string[];
}

/**
 * What the relay tells a completion besides the outcomes. `partitionCount`: the count it read these partitions with
 * (as passed to `read`). A store may then find each row by its partition as its index spells it (PostgreSQL: one probe
 * of the partition index on both of its columns, whatever the table's size was when the statement's plan was cached).
 * Every store applies no partition while the table has another count, as if fenced (a resize also changed every
 * epoch); a partition at or above the count is simply not applied. Absent: the store takes the count from the table.
 */
export interface PartitionCompleteOptions {
  readonly partitionCount?: number;
}

/** What one partition's read returned (the rows are in `PartitionReadResult.messages`). */
export interface PartitionReadOutcome {
  readonly partition: number;
  /** The highest seq the fresh branch returned, `null` for none. */
  readonly reached: string | null;
  /** The recheck sent with the request: whether the horizon allowed it, the highest seq it returned, whether it filled `limit`. */
  readonly recheck: { readonly applied: boolean; readonly last: string | null; readonly full: boolean } | null;
}

export interface PartitionReadResult {
  /**
   * Every transaction below this has ended (PostgreSQL: the snapshot's xmin). Ordered like the tags; stores
   * whose seq order is commit order (SQLite) may return any constant and never skip a recheck.
   */
  readonly horizon: string;
  /** Drawn after the read's snapshot, present when some fresh branch returned rows: the tag of the ranges passed. */
  readonly tag: string | null;
  readonly partitions: readonly PartitionReadOutcome[];
  /** All partitions' rows, in seq order within each partition; a message appears once. */
  readonly messages: readonly PartitionMessage[];
}

/** A message whose publish was not attempted or must wait: scheduled without using up an attempt. */
export interface HeldMessage {
  readonly id: string;
  /** Due again this much later, on the database clock (0: due at once, yet still marked as scheduled). */
  readonly delayMs: number;
  /** Why, for operators (`last_error`); `null` keeps the stored one. */
  readonly reason: string | null;
}

/** The outcome of a partition's publishes, written under its lease. */
export interface PartitionCompletion extends Pick<PartitionLease, 'partition' | 'epoch'> {
  /** Deleted, or marked `published` when the store retains published rows. */
  readonly published: readonly string[];
  /**
   * Optional: the seq of each `published` id, in the same order, as the read returned it. A store may then take
   * the rows by seq (PostgreSQL does: one index probe per row instead of two). A row is written only when its id
   * and seq name it; a list of another length, or a value that is not a seq, is refused (`OUTBOXER_INVALID_OPTION`).
   */
  readonly publishedSeqs?: readonly string[];
  /** `attempts + 1` and scheduled after `retryInMs`, or parked dead, with the error. */
  readonly failed: readonly FailedMessage[];
  /** Scheduled without counting an attempt (a paused topic, later rows of a key that waits). */
  readonly held: readonly HeldMessage[];
}

export interface CompletionOutcome extends Pick<PartitionLease, 'partition' | 'epoch'> {
  /** `false`: the lease was no longer mine at this epoch; nothing was written for the partition. */
  readonly applied: boolean;
  /** Rows changed (deleted or updated); fewer than sent when some had already left the pending state or were skipped. */
  readonly changed: number;
  /**
   * Ids of rows still pending that another session holds locked: nothing was written for them, and the
   * completion did not wait for them. Write their outcome again later (alone); until then they are not
   * published again, and they hold back the later rows of their key.
   */
  readonly skipped: readonly string[];
}

/**
 * The read role of engine v2: a relay reads the partitions it leases (`RelayLeases`) without writing any row,
 * and writes each message's outcome once, fenced by the partition's epoch. Reached as `store.reader`.
 *
 * Contract (every store):
 * - **Reads write no row.** Fresh rows come in seq order above `after`; due rows (`due_at` reached) and a
 *   settled recheck range below it. Only pending rows of the requested partition (hash of the key, or of the id
 *   for unkeyed rows, modulo the configured count) are returned.
 * - **No late commit is lost.** A row that commits with a seq at or below a position a read returned is found
 *   by a later read's recheck of the range, once the horizon reached the range's tag (see docs/design/read-path.md,
 *   "Late commits").
 * - **Holds live in the rows.** A scheduled row holds back every later row of its key, for whoever owns the
 *   partition next: reads flag such rows (`waitsFor`) instead of hiding them.
 * - **Fenced writes.** `complete` writes a partition's outcomes only while that partition names the relay as
 *   owner at the given epoch, in the same statement (so a grant to another relay waits for it or voids it).
 *   It never waits for a row another session locks: such rows are skipped and reported (`skipped`).
 *   Publishing or parking a row twice, or writing any outcome for a row no longer pending, changes nothing the
 *   second time; a backoff or hold written twice is written twice (an attempt counted again), so a relay writes
 *   each failure once.
 */
export interface PartitionReader {
  /**
   * Reads the given partitions of mine in one round trip; `partitionCount` is the configured count they hash into.
   * With `options.dueDestinations`, the due branch runs per destination named and returns no other destination's due rows.
   */
  read(relayId: string, partitionCount: number, requests: readonly PartitionReadRequest[], options?: PartitionReadOptions): Promise<PartitionReadResult>;
  /** Writes the outcomes of several partitions; each is applied whole or (fenced) not at all. */
  complete(relayId: string, completions: readonly PartitionCompletion[], options?: PartitionCompleteOptions): Promise<readonly CompletionOutcome[]>;
  /**
   * Counts an attempt before the publish (for partitions whose owners keep dying, so a message that kills
   * relays is eventually parked): `attempts + 1`, fenced like `complete`. Returns whether it was written.
   */
  countAttempt(relayId: string, lease: Pick<PartitionLease, 'partition' | 'epoch'>, id: string): Promise<boolean>;
  /**
   * Optional: the topics operators paused (`OutboxOperator.pauseTopic`), which the relay reads every few seconds
   * (never with each read) and holds. Reads only. Default: a store without it has no operator pauses.
   */
  pausedTopics?(): Promise<readonly TopicPause[]>;
  /**
   * Optional: the destinations operators paused as a whole (`OutboxOperator.pauseDestination`), read with
   * `pausedTopics` in the same period and held the same way. Reads only. Default: a store without it (or a table
   * not migrated that far) has no operator pauses of destinations.
   */
  destinationPauses?(): Promise<readonly DestinationPause[]>;
}
