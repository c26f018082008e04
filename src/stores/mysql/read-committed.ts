import { OutboxerError } from '../../core/errors.js';
import type { MysqlDatabase, MysqlExecutor } from './database.js';

/**
 * Runs `work` in a transaction at READ COMMITTED on one connection, the pool's own isolation level untouched
 * (`SET TRANSACTION` applies to the next transaction only). The lease and completion transactions need it:
 * at REPEATABLE READ InnoDB keeps a lock on every row a locking statement reads, matching or not, so an update
 * of 20 partitions planned as a scan of the small partitions table locked all 64 and deadlocked two acquires.
 * At READ COMMITTED the rows that do not match are unlocked at once, and an update reads the latest committed
 * version of a locked row to learn whether it matches before it waits.
 */
export async function readCommitted<T>(database: MysqlDatabase, work: (tx: MysqlExecutor) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await inReadCommitted(database, work);
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      // InnoDB rolled the whole transaction back before reporting a deadlock: running it again is safe
      if (code === 'ER_LOCK_DEADLOCK' && attempt < DEADLOCK_ATTEMPTS) continue;
      if (code === 'ER_LOCK_WAIT_TIMEOUT' || code === 'ER_LOCK_DEADLOCK') {
        throw new OutboxerError(
          'OUTBOXER_LOCK_TIMEOUT',
          `a lease or completion transaction lost its locks (${code}${code === 'ER_LOCK_DEADLOCK' ? `, ${attempt} attempts` : ''}); the relay retries it`,
          { cause: error },
        );
      }
      throw error;
    }
  }
}

const DEADLOCK_ATTEMPTS = 3;

function inReadCommitted<T>(database: MysqlDatabase, work: (tx: MysqlExecutor) => Promise<T>): Promise<T> {
  return database.session(async (session) => {
    await session.query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
    await session.query('START TRANSACTION');
    try {
      const result = await work(session);
      await session.query('COMMIT');
      return result;
    } catch (error) {
      await session.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  });
}
