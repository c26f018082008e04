import { describeError, OutboxerError, type OutboxerErrorCode, PublishError } from './errors.js';

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
  // the destination asked to be left alone for a while (HTTP 429 or 503 with Retry-After): counted, retried after it
  OUTBOXER_RATE_LIMITED: 'retry',
  // the destination refused this message for good (an HTTP 4xx other than 408, 425 and 429)
  OUTBOXER_REJECTED: 'dead',
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

/**
 * Why a message was parked: a fault of the message itself (`dead`), its attempts used up (`attempts`), or relays
 * that never finished an attempt of it (`abandoned`: they stopped or lost their lease each time).
 */
export type DeadCause =
  | { readonly kind: 'dead'; readonly error: unknown }
  | { readonly kind: 'attempts'; readonly error: unknown; readonly attempts: number }
  | { readonly kind: 'abandoned'; readonly attempts: number; readonly lastError: string | null };

/** The longest reason the relay stores, as `describeError` bounds a failure. */
const MAX_REASON_LENGTH = 1000;

/** What an operator does about any dead message; the row and every log line carry its id. */
const OPERATOR_ACTION = "fix the cause, then run 'outboxer dead retry <id>' to publish it again";

function parked(cause: DeadCause): string {
  switch (cause.kind) {
    case 'dead':
      return `parked as dead at once, as it cannot be published as it is: ${OPERATOR_ACTION}`;
    case 'attempts':
      return `parked as dead after ${cause.attempts} failed attempts (retry.maxAttempts): ${OPERATOR_ACTION}`;
    case 'abandoned':
      return `parked as dead: ${OPERATOR_ACTION}`;
  }
}

/**
 * The reason stored with a message parked as dead: what happened (in the publisher's words, which never say what
 * the relay does next: only the relay knows), then what the operator can do. Bounded as `describeError` bounds a
 * failure.
 */
export function deadReason(cause: DeadCause): string {
  const action = `; ${parked(cause)}`;
  const room = MAX_REASON_LENGTH - action.length;
  const happened =
    cause.kind === 'abandoned'
      ? `gave up after ${cause.attempts} attempts: the relay holding it stopped or lost its lease each time (last error: ${cause.lastError ?? 'none'})`
      : describeError(cause.error, room);
  return `${happened.length > room ? `${happened.slice(0, room - 1)}…` : happened}${action}`;
}
