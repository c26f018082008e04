import { describeError, OutboxerError } from '../../core/errors.js';
import type { Logger } from '../../core/ports.js';

/**
 * Loads a database's driver, an optional peer dependency, or says which store needs which package
 * (`OUTBOXER_MISSING_DEPENDENCY`). `storeTitle` is the dialect's title (`MariaDB/MySQL`).
 */
export async function loadDriver<T>(storeTitle: string, packageName: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND') throw missingDriver(storeTitle, packageName, error);
    throw error;
  }
}

/** Names the store, not a command: stores open in library use as well as under the CLI. */
export function missingDriver(storeTitle: string, packageName: string, cause?: unknown): OutboxerError {
  return new OutboxerError('OUTBOXER_MISSING_DEPENDENCY', `the ${storeTitle} store needs the '${packageName}' package: npm install ${packageName}`, {
    cause,
  });
}

/** An idle pooled connection's failure, logged, never left to crash the process. */
export function logIdleFailure(logger: Logger): (error: Error) => void {
  return (error) => logger.warn({ error: describeError(error) }, 'idle database connection failed; the pool will reconnect');
}
