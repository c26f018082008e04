import type { MysqlDatabase, MysqlExecutor } from '../database.js';

/**
 * Runs `work` in a transaction at READ COMMITTED on one connection, the pool's own isolation level untouched
 * (`SET TRANSACTION` applies to the next transaction only). The lease and completion transactions need it:
 * at REPEATABLE READ InnoDB keeps a lock on every row a locking statement reads, matching or not, so an update
 * of 20 partitions planned as a scan of the small partitions table locked all 64 and deadlocked two acquires.
 * At READ COMMITTED the rows that do not match are unlocked at once, and an update reads the latest committed
 * version of a locked row to learn whether it matches before it waits.
 */
export function readCommitted<T>(database: MysqlDatabase, work: (tx: MysqlExecutor) => Promise<T>): Promise<T> {
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
