import type { OutboxTransaction } from '../../core/ports/outbox-transaction.js';
import { notInTransaction, vouchedOpen } from '../shared/open-transaction.js';

const UNKNOWN_SYSTEM_VARIABLE = 1193;
const SAVEPOINT_DOES_NOT_EXIST = 1305;

const errno = (error: unknown): unknown => (error as { errno?: unknown } | null)?.errno;
export const isUnknownVariable = (error: unknown): boolean =>
  errno(error) === UNKNOWN_SYSTEM_VARIABLE || /unknown system variable/i.test(error instanceof Error ? error.message : '');
const isMissingSavepoint = (error: unknown) =>
  errno(error) === SAVEPOINT_DOES_NOT_EXIST || /savepoint .* does not exist/i.test(error instanceof Error ? error.message : '');

/**
 * Refuses a transaction handle that is not inside an open transaction. Where the driver or ORM cannot vouch for it,
 * the session says: MariaDB's `@@in_transaction` (or autocommit off, where the first statement begins one); on
 * MySQL, which lacks it, a savepoint that outlives its statement only inside a transaction.
 */
export async function proveMysqlTransaction(tx: OutboxTransaction<'mysql'>): Promise<void> {
  if (await vouchedOpen(tx)) return;
  let open: boolean;
  try {
    const [row] = (await tx.query('SELECT @@in_transaction AS in_transaction, @@autocommit AS autocommit', [])).rows;
    open = Number(row?.in_transaction) === 1 || Number(row?.autocommit) === 0;
  } catch (error) {
    if (!isUnknownVariable(error)) throw error;
    open = await savepointOutlivesStatement(tx);
  }
  if (!open) throw notInTransaction(tx, 'outside any transaction (autocommit: each statement would commit on its own)');
}

async function savepointOutlivesStatement(tx: OutboxTransaction<'mysql'>): Promise<boolean> {
  await tx.query('SAVEPOINT outboxer_probe', []);
  try {
    await tx.query('RELEASE SAVEPOINT outboxer_probe', []);
    return true;
  } catch (error) {
    if (isMissingSavepoint(error)) return false;
    throw error;
  }
}
