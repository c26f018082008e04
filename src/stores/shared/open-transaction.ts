import { ConfigurationError, OutboxerError } from '../../core/errors.js';
import type { OutboxTransaction, SqlDialect } from '../../core/ports/outbox-transaction.js';

/** The names each dialect goes by in messages. */
const DIALECT_NAMES: Readonly<Record<SqlDialect, string>> = { postgres: 'PostgreSQL', mysql: 'MariaDB/MySQL', sqlite: 'SQLite' };

/** Refuses a transaction of another database than the store's (an adapter over the wrong connection). */
export function checkDialect<D extends SqlDialect>(tx: OutboxTransaction, dialect: D): OutboxTransaction<D> {
  if (tx.dialect === dialect) return tx as OutboxTransaction<D>;
  throw new ConfigurationError(
    'OUTBOXER_WRONG_DIALECT',
    `enqueue into a ${DIALECT_NAMES[dialect]} outbox was given ${tx.source} on ${DIALECT_NAMES[tx.dialect] ?? 'another database'}: pass a transaction on the database the store was made for`,
  );
}

/** The refusal of a handle that is not inside an open transaction: nothing was written. */
export function notInTransaction(tx: Pick<OutboxTransaction, 'source' | 'fix'>, why: string): OutboxerError {
  return new OutboxerError(
    'OUTBOXER_NOT_IN_TRANSACTION',
    `enqueue was given ${tx.source} ${why}: the message would not commit or roll back with your transaction, so nothing was written. ${tx.fix}`,
  );
}

/**
 * What the transaction's own status says: `true` when the driver or ORM vouches that it is open, `false` when it
 * cannot tell (the store then proves it in the database). A closed or failed transaction is refused here.
 */
export async function vouchedOpen(tx: OutboxTransaction): Promise<boolean> {
  const status = await tx.status?.();
  if (status === 'open') return true;
  if (status === 'closed') throw notInTransaction(tx, 'that is not inside an open transaction (never begun, or already committed or rolled back)');
  if (status === 'failed') throw notInTransaction(tx, 'whose transaction failed and waits for its ROLLBACK');
  return false;
}
