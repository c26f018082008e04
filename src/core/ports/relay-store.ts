import type { OutboxMessage } from '../message.js';

/** A batch of messages leased to one relay. `token` fences every later write to them. */
export interface Claim {
  readonly token: string;
  readonly messages: readonly OutboxMessage[];
  /**
   * Optional: the lowest `seq` the claim looked at (its first claimable row at or after `fromSeq`), for the
   * next claim's `fromSeq`.
   */
  readonly lowestCandidateSeq?: string;
}

export interface ClaimRequest {
  /** Names the relay in the lease, for operators (`status`, logs). */
  readonly owner: string;
  readonly leaseMs: number;
  readonly limit: number;
  /**
   * At most this many keys (chains published side by side) per claim; the rest of `limit` is filled with
   * the runs behind them and with unkeyed messages. Keeps keys free for other lanes and relays when a
   * backlog spans many keys. Default: `limit`.
   */
  readonly maxKeys?: number;
  /**
   * A hint: look for claimable rows from this `seq` on (a previous claim's `lowestCandidateSeq`), so dead
   * index entries below it are not walked again while an old snapshot keeps them. Rows below it that
   * become claimable later (late commits, retries, expired leases) are found by the next claim without it.
   */
  readonly fromSeq?: string;
}

/** A message whose publish failed, with what to do about it. */
export type FailedMessage =
  | { readonly id: string; readonly error: string; readonly retryInMs: number }
  | { readonly id: string; readonly error: string; readonly dead: true };

/**
 * The relay role: what `Relay` needs from a store to move committed messages to a broker.
 *
 * Contract:
 * - Fencing: `claim` leases messages under a fresh token, on the database clock. Every later write names
 *   that token and changes only the messages still leased under it: once a lease ran out and another relay
 *   claimed them, the first relay's marks change nothing (and report 0). A lease that ran out but was not
 *   taken over may still be marked by its holder.
 * - Ordering: a claim takes only the head of each key (no earlier pending row of that key) and the run
 *   behind it, in store order; a key is never leased to two claims at once. A head that waits (backoff,
 *   delay, a paused topic) holds back the rest of its key only; other keys and unkeyed messages flow.
 * - Idempotence: marking, failing or releasing a message twice, or after it left the lease, changes nothing
 *   the second time; each returns how many messages it changed.
 * - Housekeeping (`purgePublished`, `purgeIdempotencyKeys`) deletes at most `limit` rows per call and only
 *   what the store's retention settings allow.
 */
export interface RelayStore {
  /** Leases up to `limit` publishable messages, at most one run per key, on the database clock. */
  claim(request: ClaimRequest): Promise<Claim>;
  /** Marks as published the given messages still leased under `token`; returns how many it marked. */
  markPublished(token: string, ids: readonly string[]): Promise<number>;
  /**
   * Optional: marks messages of several leases in one statement (the relay batches hand-off marks with it);
   * returns the ids that were still leased under their token and are now marked.
   */
  markPublishedEach?(marks: readonly { readonly token: string; readonly id: string }[]): Promise<ReadonlySet<string>>;
  /** Records failures (backoff or dead) for messages still leased under `token`. */
  markFailed(token: string, failures: readonly FailedMessage[]): Promise<number>;
  /**
   * Gives back messages still leased under `token` without counting the attempt; `lastError`, when given,
   * records why (e.g. the broker was unreachable) so operators can see it. With `delayMs` they become
   * claimable again only that much later (a paused topic), on the database clock.
   */
  release(token: string, ids: readonly string[], lastError?: string, delayMs?: number): Promise<number>;
  /** Deletes at most `limit` published messages whose retention has run out (none when rows are deleted at once). */
  purgePublished(limit: number): Promise<number>;
  /** Forgets at most `limit` idempotency keys older than the store's idempotency window. */
  purgeIdempotencyKeys(limit: number): Promise<number>;
}
