/** Which message an inbox entry is about (payloads are never stored in the inbox). */
export interface InboxEntryRef {
  readonly consumer: string;
  readonly id: string;
  readonly type: string;
  readonly topic: string;
  readonly key: string | null;
}

/** What `claim` found: the message is ours to handle now, or it was settled before. */
export type InboxClaim = { readonly state: 'claimed'; readonly attempts: number } | { readonly state: 'processed' | 'dead'; readonly attempts: number };

/** What recording a failure did: still retryable, now dead, or already processed by another delivery. */
export type InboxFailureRecord = { readonly state: 'failed' | 'dead'; readonly attempts: number } | { readonly state: 'processed'; readonly attempts: number };

export interface InboxDeadEntry {
  readonly consumer: string;
  readonly id: string;
  readonly type: string;
  readonly topic: string;
  readonly key: string | null;
  readonly attempts: number;
  readonly reason: string;
  readonly firstSeenAt: Date;
  readonly deadAt: Date;
}

export interface InboxStats {
  readonly processed: number;
  /** Failed at least once and not settled yet (retrying). */
  readonly failed: number;
  readonly dead: number;
}

/**
 * The inbox's storage port: a few atomic operations, keyed by (consumer, message id).
 * `Tx` is the transaction the user's handler writes through.
 */
export interface InboxStore<Tx = unknown> {
  /** Runs `work` in a new transaction: committed if it resolves, rolled back if it throws. */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Inside `tx`: marks the entry processed (attempts + 1) unless it is already processed or dead, and locks it
   * until `tx` ends, so a concurrent copy waits and then sees it settled. Rolled back with `tx` on failure.
   */
  claim(tx: Tx, entry: InboxEntryRef): Promise<InboxClaim>;
  /**
   * `claim` for several entries of one consumer with distinct ids, inside `tx`, in one statement where the store can:
   * one result per entry, in their order. Optional: without it, the inbox claims a batch one entry at a time.
   */
  claimMany?(tx: Tx, entries: readonly InboxEntryRef[]): Promise<InboxClaim[]>;
  /**
   * Outside any handler transaction: counts a failed attempt with its reason; the entry becomes dead when
   * `dead` is true or attempts reach `maxAttempts`. Changes nothing on an entry already processed or dead.
   */
  recordFailure(entry: InboxEntryRef, failure: { readonly reason: string; readonly maxAttempts: number; readonly dead: boolean }): Promise<InboxFailureRecord>;
  /** Deletes at most `limit` processed entries older than `olderThanMs` (by the database clock); returns how many. */
  purgeProcessed(olderThanMs: number, limit: number): Promise<number>;
  stats(consumer?: string): Promise<InboxStats>;
  listDead(consumer: string, limit: number): Promise<InboxDeadEntry[]>;
  /** Deletes dead entries of a consumer (a redelivered copy is then handled again); returns how many. */
  purgeDead(consumer: string, ids: readonly string[] | 'all'): Promise<number>;
  migrate(): Promise<void>;
  migrationSql(): string;
  close(): Promise<void>;
}
