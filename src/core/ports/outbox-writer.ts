import type { NewOutboxMessage } from '../message.js';

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
}
