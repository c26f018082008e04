import { setTimeout as sleep } from 'node:timers/promises';
import { OutboxerError } from '../../../core/errors.js';
import { codeOf, LOCK_NOT_AVAILABLE } from '../connection-errors.js';
import type { PgDatabase, SqlExecutor } from '../database.js';

/** How long an operator's transaction waits for a table or row lock, and how often it tries. */
export interface LockPatience {
  readonly lockTimeoutMs: number;
  readonly lockAttempts: number;
  /** Called after an attempt gave up waiting (or was chosen as a deadlock victim), before the next one. */
  readonly onRetry?: ((attempt: number) => void) | undefined;
}

const DEADLOCK = '40P01';

/**
 * Runs `work` in a transaction under `lock_timeout`, again (after a pause that grows) when a lock was not granted
 * in time. A DDL lock that waits in the queue holds back every writer that comes after it, so it waits briefly
 * and tries again, rather than once for as long as the longest transaction in flight takes.
 */
export async function lockedTransaction<T>(database: PgDatabase, what: string, patience: LockPatience, work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await database.transaction(async (tx) => {
        await tx.query(`SET LOCAL lock_timeout = ${Math.trunc(patience.lockTimeoutMs)}`);
        return work(tx);
      });
    } catch (error) {
      const code = codeOf(error);
      if (code !== LOCK_NOT_AVAILABLE && code !== DEADLOCK) throw error;
      if (attempt >= patience.lockAttempts) {
        throw new OutboxerError(
          'OUTBOXER_LOCK_TIMEOUT',
          `${what}: a lock was not granted in ${patience.lockAttempts} tries of ${patience.lockTimeoutMs} ms (a long transaction on the table?): look for it in pg_stat_activity, then run again (it is safe to repeat), or raise lockTimeoutMs or lockAttempts`,
          { cause: error },
        );
      }
      patience.onRetry?.(attempt);
      await sleep(Math.min(100 * attempt, 1000));
    }
  }
}
