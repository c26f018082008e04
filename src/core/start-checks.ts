import { describeError, OutboxerError, type OutboxerErrorCode } from './errors.js';
import type { Logger } from './ports.js';

/**
 * Codes of a misconfiguration that no retry can mend: a start check that meets one fails at once, with a
 * message that says what to fix. Everything else a start check meets (a server down, a timeout) is an outage.
 */
export const MISCONFIGURATION_CODES: ReadonlySet<OutboxerErrorCode> = new Set<OutboxerErrorCode>([
  'OUTBOXER_NOT_MIGRATED',
  'OUTBOXER_DATABASE_NOT_FOUND',
  'OUTBOXER_AUTH_FAILED',
  'OUTBOXER_PERMISSION_DENIED',
  'OUTBOXER_VHOST_REFUSED',
  'OUTBOXER_WRONG_PROTOCOL',
  'OUTBOXER_EXCHANGE_REFUSED',
]);

export function isMisconfiguration(error: unknown): error is OutboxerError {
  return error instanceof OutboxerError && MISCONFIGURATION_CODES.has(error.code);
}

export interface StartCheck {
  /** What is checked, for the log: `database`, `broker`. */
  readonly what: string;
  readonly check: () => Promise<void>;
}

/**
 * Runs the checks side by side. Rejects with the first misconfiguration, in the order of `checks`; an outage
 * is logged as a warning and let through (a relay rides out outages once started, as a container platform
 * expects of a service whose dependency starts later).
 */
export async function runStartChecks(checks: readonly StartCheck[], logger: Logger): Promise<void> {
  const results = await Promise.allSettled(checks.map((c) => c.check()));
  for (const result of results) {
    if (result.status === 'rejected' && isMisconfiguration(result.reason)) throw result.reason;
  }
  results.forEach((result, index) => {
    if (result.status === 'fulfilled') return;
    const what = checks[index]?.what ?? 'check';
    logger.warn(
      { check: what, error: describeError(result.reason) },
      `start check: the ${what} is out of reach now; the relay starts anyway and retries it with backoff`,
    );
  });
}
