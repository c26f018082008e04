import type { DeadMessage, NewOutboxMessage, OutboxMessage } from './message.js';

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

/** A lease taken at insert time for the in-process fast path (see `Outbox.transaction`). */
export interface HandoffLease {
  readonly owner: string;
  readonly token: string;
  readonly leaseMs: number;
}

export interface InsertResult {
  /** The effective id of each input message, in order (see `insert`). */
  readonly ids: readonly string[];
  /** The inserted messages that were leased under the hand-off lease, in store order. */
  readonly leased: readonly OutboxMessage[];
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

export interface OutboxStats {
  /** Ready to publish now. */
  readonly pending: number;
  /** Waiting for their available time (delayed or backing off after a failure). */
  readonly scheduled: number;
  /** Leased by a relay right now. */
  readonly inFlight: number;
  /** Published and still retained (0 when published rows are deleted at once). */
  readonly published: number;
  readonly dead: number;
  /** Age in seconds of the oldest message not yet published or dead, by the database clock; 0 if none. */
  readonly oldestPendingAgeSeconds: number;
}

/**
 * The storage port: a few atomic operations every database implements the same way.
 * `Tx` is what the caller's transaction looks like for this database.
 * All writes after a claim are fenced by its token: a relay whose lease was taken over changes nothing.
 */
export interface OutboxStore<Tx = unknown> {
  /**
   * Inserts inside the caller's open transaction; never commits or rolls back. Returns, in input order,
   * the id each message has in the store: its own, or for a repeated idempotency key the id of the
   * message first stored under that key (which is then not stored again).
   */
  insert(tx: Tx, messages: readonly NewOutboxMessage[]): Promise<readonly string[]>;
  /**
   * Optional fast path: like `insert`, but leases each message whose key allows it to `lease`, so a relay
   * in this process can publish it right after the commit without claiming it. Stores without it use `insert`.
   */
  insertLeased?(tx: Tx, messages: readonly NewOutboxMessage[], lease: HandoffLease): Promise<InsertResult>;
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
  stats(): Promise<OutboxStats>;
  listDead(limit: number): Promise<DeadMessage[]>;
  /** Moves dead messages back to pending with fresh attempts; `'all'` for every one (in bounded batches). */
  retryDead(ids: readonly string[] | 'all'): Promise<number>;
  /** Deletes dead messages; `'all'` for every one. */
  purgeDead(ids: readonly string[] | 'all'): Promise<number>;
  migrate(): Promise<void>;
  /**
   * Optional start check: connects and confirms that the schema is migrated to the version this code needs.
   * Rejects with a MisconfigurationError for what no retry can mend (`OUTBOXER_NOT_MIGRATED`, a wrong password
   * or database, a URL that points at another kind of server), or another OutboxerError while the database is
   * out of reach (`OUTBOXER_DATABASE_UNAVAILABLE`). Default: no check.
   */
  verify?(): Promise<void>;
  /** The DDL `migrate` would apply, for DBAs who apply it themselves. */
  migrationSql(): string;
  close(): Promise<void>;
}

/** What a broker publisher can tell the relay about itself. */
export interface PublisherCapabilities {
  /** The broker's own per-message limit, if known: larger bodies fail permanently without a round trip. */
  readonly maxMessageBytes?: number;
}

/**
 * The publisher port. `publish` resolves only once the broker has confirmed it stored the message,
 * and rejects with a PublishError otherwise (a timeout included). Many publishes may be in flight at once.
 */
export interface Publisher {
  readonly name: string;
  readonly capabilities: PublisherCapabilities;
  publish(message: OutboxMessage): Promise<void>;
  /**
   * Optional start check: connects now (instead of at the first publish) and declares what the publisher owns
   * (the RabbitMQ exchange). Rejects with a MisconfigurationError for what no retry can mend (wrong
   * credentials, vhost, port or protocol; an exchange declared differently), or with a PublishError
   * `OUTBOXER_BROKER_UNAVAILABLE` while the broker is out of reach. Default: no check.
   */
  verify?(): Promise<void>;
  close(): Promise<void>;
}

/** pino-compatible logging surface: `logger.info({ ...fields }, 'message')`. */
export interface Logger {
  debug(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/**
 * A hint that new messages were committed somewhere (another process, a trigger): the relay claims at
 * once instead of at its next poll. Only a hint: polling stays the source of truth, so a lost signal
 * costs latency, never a message.
 */
export interface WakeSignal {
  start(onWake: () => void): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Checks a payload against the schema registered for its type before it is stored (a `MessageRegistry`
 * from `outboxer/consumer` is one). Returns what to store, or throws a MessageValidationError; an unknown
 * type is refused, never resolved by name.
 */
export interface OutgoingValidator {
  validateOutgoing(type: string, payload: unknown): unknown;
}

/** Tells relays in other processes that a transaction with outbox messages committed. */
export interface CommitNotifier {
  notify(): void;
  close(): Promise<void>;
}
