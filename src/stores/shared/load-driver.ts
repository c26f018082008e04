import { describeError, OutboxerError } from '../../core/errors.js';
import type { Logger } from '../../core/ports.js';

/** Loads a database's driver, an optional peer dependency, or says which package to install, or says which package to install (`OUTBOXER_MISSING_DEPENDENCY`). */
export async function loadDriver<T>(name: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND') throw missingDriver(name, error);
    throw error;
  }
}

export function missingDriver(name: string, cause?: unknown): OutboxerError {
  return new OutboxerError('OUTBOXER_MISSING_DEPENDENCY', `this command needs the '${name}' package: npm install ${name}`, { cause });
}

/** An idle pooled connection's failure, logged, never left to crash the process. */
export function logIdleFailure(logger: Logger): (error: Error) => void {
  return (error) => logger.warn({ error: describeError(error) }, 'idle database connection failed; the pool will reconnect');
}
