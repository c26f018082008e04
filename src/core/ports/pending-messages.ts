import type { MessageBody, MessageHeaders } from '../message.js';

/** A pending message as operators list it: where it stands, never what it carries. */
export interface PendingMessage {
  readonly id: string;
  /** Store order (per-key order follows it); a bigint as decimal text. */
  readonly seq: string;
  readonly topic: string;
  readonly type: string;
  readonly key: string | null;
  /** Publish attempts that failed so far (0 for a message never tried, or only held). */
  readonly attempts: number;
  /** Why its last attempt failed or why it is held (a paused topic, an earlier message of its key); `null` if neither. */
  readonly lastError: string | null;
  readonly createdAt: Date;
  /**
   * Set while the message is scheduled (a backoff after a failure, a hold, a producer's delay): not published
   * before this time, and the later messages of its key wait for it. `null`: due, published in its key's turn.
   */
  readonly dueAt: Date | null;
  /** Seconds since `createdAt` by the database clock (compare `dueAt` with `createdAt + ageSeconds`, not with this host's clock). */
  readonly ageSeconds: number;
  /** Its named destination; null for the relay's own publisher (the `default` destination). */
  readonly destination: string | null;
}

/** One pending message in full. Its body is read only when asked for (`{ body: true }`). */
export interface PendingMessageDetail extends PendingMessage {
  readonly contentType: string;
  /** Header names, sorted: always shown. */
  readonly headerNames: readonly string[];
  /** Size of the body on the wire, in bytes. */
  readonly bodyBytes: number;
  /** Only with `{ body: true }`: the headers with their values, and the body exactly as stored. */
  readonly content?: { readonly headers: MessageHeaders; readonly body: MessageBody };
}

/** Which pending messages to list, in store order (`seq`). */
export interface PendingQuery {
  /** At most this many, 1 to `MAX_PENDING_LIST_LIMIT`. */
  readonly limit: number;
  /** Only this topic, exactly. */
  readonly topic?: string | undefined;
  /** Only this key, exactly. */
  readonly key?: string | undefined;
  /** Only messages created at least this many seconds ago, by the database clock. */
  readonly olderThanSeconds?: number | undefined;
  /** Only this destination; `null` (or `'default'` from the CLI and API) for rows without one. */
  readonly destination?: string | null | undefined;
}

/**
 * Pending messages for operators: list, inspect, delete (`outboxer pending`, `/api/pending`). Optional in the
 * operator role: every store of outboxer implements them; an operator without them is answered "not supported".
 *
 * Contract (every store):
 * - `listPending` and `inspectPending` read and never write. They see only `pending` rows (due or scheduled),
 *   never published or dead ones. The body is read only by `inspectPending(id, { body: true })`.
 * - `deletePending` deletes only rows still `pending`: ids that are unknown, published or dead change nothing,
 *   so a repeated call changes nothing more. Returns how many it deleted. It never waits on a relay: a relay's
 *   completion skips rows another session locks, and one that finds the row gone writes nothing for it.
 * - A relay may have read a message before it was deleted: that message may still be published once (with its
 *   id), after the delete. Deleting a scheduled message ends what it held: the later messages of its key are
 *   published from the relays' next read, in their order.
 * - Inputs are checked before any statement (`checkPendingQuery`, `checkMessageIds`): a refusal is a
 *   `ConfigurationError` naming the input (`OUTBOXER_INVALID_ID`, `OUTBOXER_INVALID_TOPIC`, ...).
 */
export interface PendingMessageOperator {
  /** Pending messages in store order, filtered, at most `query.limit`. */
  listPending?(query: PendingQuery): Promise<PendingMessage[]>;
  /** One pending message, or `undefined` when no pending message has this id. */
  inspectPending?(id: string, options?: { readonly body?: boolean }): Promise<PendingMessageDetail | undefined>;
  /** Deletes these messages where they are still pending (in bounded batches); returns how many. */
  deletePending?(ids: readonly string[]): Promise<number>;
}
