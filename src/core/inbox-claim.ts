import { ConfigurationError, OutboxerError } from './errors.js';
import type { InboxEntryRef } from './ports/inbox-store.js';

/** How to give a handler the ORM's transaction: named in every refusal of a claim's handle. */
export const INBOX_TRANSACTION_FIX =
  "Give the inbox the ORM's own transaction through withOrmTransactions(store, { transaction: (work) => db.transaction().execute(work), adapt: fromKysely }) " +
  "(or your ORM's transaction and adapter): `transaction` must run work inside that transaction and hand it that transaction's handle.";

/**
 * Runs a store's claim through a transaction of the port (an ORM's, through its adapter). The stores' own checks
 * (the dialect, the proof that the transaction is open) are shared with `enqueue` and speak of it: a refusal is
 * restated here as the inbox's, with the store's words kept as the detail and the error as its cause.
 */
export async function claimInTransaction<T>(entry: InboxEntryRef, claim: () => Promise<T>): Promise<T> {
  try {
    return await claim();
  } catch (error) {
    if (!(error instanceof OutboxerError) || (error.code !== 'OUTBOXER_NOT_IN_TRANSACTION' && error.code !== 'OUTBOXER_WRONG_DIALECT')) throw error;
    const message = `inbox ${entry.consumer}: the claim of message ${entry.id} was refused, so nothing was claimed and no handler ran. ${INBOX_TRANSACTION_FIX} The store said: ${error.message}`;
    if (error instanceof ConfigurationError) throw new ConfigurationError(error.code, message, { options: error.options, cause: error });
    throw new OutboxerError(error.code, message, { cause: error });
  }
}
