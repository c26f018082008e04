import type { NewOutboxMessage, OutboxMessage } from '../message.js';

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

/**
 * The writer role: what producers (`Outbox.enqueue`, `Outbox.transaction`) need from a store.
 * `Tx` is what the caller's transaction looks like for this database.
 *
 * Contract:
 * - Writes only inside the caller's open transaction and never begins, commits or rolls it back: a message
 *   is stored exactly when that transaction commits.
 * - Store order follows the input order: messages of one key are published in the order they were
 *   inserted.
 * - Idempotent by `idempotencyKey` within the store's window: a repeated key stores nothing new and
 *   answers with the id first stored under it (also within one batch); a rolled-back insert forgets its keys.
 */
export interface OutboxWriter<Tx = unknown> {
  /**
   * Inserts inside the caller's open transaction; never commits or rolls back. Returns, in input order,
   * the id each message has in the store: its own, or for a repeated idempotency key the id of the
   * message first stored under that key (which is then not stored again).
   */
  insert(tx: Tx, messages: readonly NewOutboxMessage[]): Promise<readonly string[]>;
  /**
   * Optional fast path: like `insert`, but leases each message whose key allows it to `lease`, so a relay
   * in this process can publish it right after the commit without claiming it. The lease is the same
   * fencing token a claim gives (`RelayStore`): marks under `lease.token` apply only while it holds.
   * Stores without it use `insert`.
   */
  insertLeased?(tx: Tx, messages: readonly NewOutboxMessage[], lease: HandoffLease): Promise<InsertResult>;
}
