import { OutboxerError, type OutboxerErrorCode, PublishError } from './errors.js';

/**
 * What a failed publish means for its message:
 * - `retry`: count the attempt and try again after the retry backoff (dead once `retry.maxAttempts` is used up);
 * - `dead`: a fault of the message itself (too large, a header or topic the broker cannot carry): park it now;
 * - `release`: the broker is out of reach or refuses this relay; give the message back uncounted and back
 *   off as a whole relay;
 * - `pause-topic`: the destination of this topic is missing (no route, exchange or stream); give the message
 *   back uncounted and pause the topic, with backoff, until its destination appears.
 */
export type FailureAction = 'retry' | 'dead' | 'release' | 'pause-topic';

/**
 * The one table from error code to action. Publishers map their drivers' errors into these codes; codes not
 * listed here (`OUTBOXER_PUBLISH_FAILED`, or any error that is not an OutboxerError) are retried unless the
 * publisher marked the PublishError `permanent`.
 */
export const FAILURE_ACTIONS: Readonly<Partial<Record<OutboxerErrorCode, FailureAction>>> = Object.freeze({
  OUTBOXER_PUBLISH_TIMEOUT: 'retry',
  OUTBOXER_BROKER_UNAVAILABLE: 'release',
  OUTBOXER_CLOSED: 'release',
  // The broker refuses this relay (found at start by `relay.verify()`; later, e.g. a rotated password).
  OUTBOXER_AUTH_FAILED: 'release',
  OUTBOXER_VHOST_REFUSED: 'release',
  OUTBOXER_WRONG_PROTOCOL: 'release',
  OUTBOXER_EXCHANGE_REFUSED: 'release',
  OUTBOXER_UNROUTABLE: 'pause-topic',
  OUTBOXER_NO_EXCHANGE: 'pause-topic',
  OUTBOXER_NO_STREAM: 'pause-topic',
  OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER: 'dead',
  OUTBOXER_INVALID_TOPIC: 'dead',
  OUTBOXER_INVALID_HEADER: 'dead',
});

/** Decides what a publish failure means: by its code where the table has it, else by `permanent`. */
export function failureAction(error: unknown): FailureAction {
  if (error instanceof OutboxerError) {
    const byCode = FAILURE_ACTIONS[error.code];
    if (byCode !== undefined) return byCode;
  }
  return error instanceof PublishError && error.permanent ? 'dead' : 'retry';
}
