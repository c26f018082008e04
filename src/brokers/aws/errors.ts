import { type OutboxerErrorCode, PublishError } from '../../core/errors.js';
import { scrubSecrets } from '../../core/redact.js';

/** What a request was doing when it failed, to name it in the error. */
export interface AwsCallContext {
  /** `SQS` or `SNS`. */
  readonly service: string;
  /** `message <id>`, or `messages <id>, <id>` for a batch. */
  readonly what: string;
  /** The queue URL or topic ARN. */
  readonly destination: string;
  /** `queue` or `topic`. */
  readonly kind: string;
  readonly timeoutMs: number;
  readonly secrets: readonly string[];
}

/** One entry of `Failed` in a 200 answer to SendMessageBatch or PublishBatch. */
export interface FailedEntry {
  readonly Code?: string | undefined;
  readonly SenderFault?: boolean | undefined;
  readonly Message?: string | undefined;
}

/** Codes as `bare` leaves them: SNS names its exceptions `<Code>Exception`, SQS adds `AWS.SimpleQueueService.` for query clients. */
const THROTTLING = new Set([
  'Throttling',
  'Throttled',
  'RequestThrottled',
  'TooManyRequests',
  'RequestLimitExceeded',
  'KmsThrottled',
  'KMSThrottling',
  'OverLimit',
  'SlowDown',
]);
const MISSING = new Set(['QueueDoesNotExist', 'NonExistentQueue', 'NotFound', 'InvalidAddress']);
const AUTH = new Set([
  'AccessDenied',
  'AuthorizationError',
  'InvalidClientTokenId',
  'UnrecognizedClient',
  'SignatureDoesNotMatch',
  'IncompleteSignature',
  'InvalidSecurity',
  'ExpiredToken',
  'InvalidAccessKeyId',
  'MissingAuthenticationToken',
  'InvalidSignature',
  'RequestExpired',
  'CredentialsProviderError',
  'KmsAccessDenied',
  'KMSAccessDenied',
]);
const INVALID = new Set([
  'InvalidParameterValue',
  'InvalidParameter',
  'InvalidMessageContents',
  'MissingParameter',
  'InvalidAttributeName',
  'InvalidAttributeValue',
  'ValidationError',
  'Validation',
  'InvalidBatchEntryId',
  'BatchEntryIdsNotDistinct',
  'TooManyEntriesInBatchRequest',
  'EmptyBatchRequest',
  'UnsupportedOperation',
  'BatchRequestTooLong',
]);
const TOO_LARGE_TEXT = /too long|too large|shorter than|BatchRequestTooLong|exceeds? the (maximum|allowed)/i;
const NETWORK_CODES = /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|ETIMEDOUT|EPIPE|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|ECONNABORTED|ERR_SOCKET_.*)$/;

/** `AWS.SimpleQueueService.NonExistentQueue` is `NonExistentQueue`, `NotFoundException` is `NotFound`. */
function bare(code: string): string {
  return code.replace(/^AWS\.SimpleQueueService\./, '').replace(/(.)Exception$/, '$1');
}

/** The error codes an SDK error carries: its name, and the query-compatible `Code` SQS adds. */
function codesOf(error: unknown): string[] {
  const given = error as { name?: unknown; Code?: unknown; code?: unknown } | null;
  return [given?.name, given?.Code, given?.code].filter((code): code is string => typeof code === 'string').map(bare);
}

function shortText(text: string, secrets: readonly string[]): string {
  const scrubbed = scrubSecrets(text, secrets);
  return scrubbed.length > 300 ? `${scrubbed.slice(0, 299)}…` : scrubbed;
}

function detailOf(error: unknown, secrets: readonly string[]): string {
  const name = error instanceof Error ? error.name : typeof error;
  const message = error instanceof Error ? error.message : String(error);
  return shortText(`${name}: ${message}`, secrets);
}

/** The SDK error itself as `cause`, unless its text holds a secret. */
function safeCause(error: unknown, secrets: readonly string[]): { cause?: unknown } {
  const text = error instanceof Error ? `${error.message}\n${error.stack ?? ''}` : String(error);
  return scrubSecrets(text, secrets) === text ? { cause: error } : {};
}

/**
 * Turns what the SDK threw for a whole request into a PublishError with a stable code. The message says what
 * happened and the fix, never what the relay does next.
 */
export function toPublishError(error: unknown, context: AwsCallContext): PublishError {
  if (error instanceof PublishError) return error;
  const { service, what, destination, kind, secrets } = context;
  const codes = codesOf(error);
  const detail = detailOf(error, secrets);
  const meta = error as { $metadata?: { httpStatusCode?: number }; $fault?: string; $retryable?: { throttling?: boolean } } | null;
  const status = meta?.$metadata?.httpStatusCode;
  const fail = (code: OutboxerErrorCode, message: string, permanent = false): PublishError =>
    new PublishError(code, message, { permanent, ...safeCause(error, secrets) });

  if (/did not establish a connection/i.test(detail)) {
    return fail(
      'OUTBOXER_BROKER_UNAVAILABLE',
      `cannot connect to ${service} for ${what} within connectTimeoutMs (${detail}); check the endpoint, region and network`,
    );
  }
  if (codes.some((code) => code === 'AbortError' || code === 'TimeoutError' || code === 'RequestTimeout')) {
    return fail(
      'OUTBOXER_PUBLISH_TIMEOUT',
      `no answer from ${service} for ${what} within ${context.timeoutMs} ms; it may have been stored anyway, and a retry carries the same outbox-id (and, on a FIFO ${kind}, the same deduplication id)`,
    );
  }
  if (codes.some((code) => THROTTLING.has(code)) || status === 429 || meta?.$retryable?.throttling === true) {
    return fail(
      'OUTBOXER_RATE_LIMITED',
      `${service} throttled ${what} on ${destination} (${detail}); raise the ${kind}'s quota or lower the relay's maxInFlight`,
    );
  }
  if (codes.some((code) => MISSING.has(code))) {
    return fail('OUTBOXER_UNROUTABLE', `the ${service} ${kind} ${destination} does not exist (${what} not stored); create it, or fix the routing options`);
  }
  if (codes.some((code) => AUTH.has(code)) || status === 401 || status === 403) {
    return fail(
      'OUTBOXER_AUTH_FAILED',
      `${service} refused the credentials or permissions of this relay for ${destination} (${detail}); check the credentials and that the policy allows ${service === 'SNS' ? 'sns:Publish' : 'sqs:SendMessage'}`,
    );
  }
  const networkCode = (error as { code?: unknown } | null)?.code;
  if (
    status === undefined &&
    ((typeof networkCode === 'string' && NETWORK_CODES.test(networkCode)) || codes.includes('NetworkingError') || /socket hang up/i.test(detail))
  ) {
    return fail('OUTBOXER_BROKER_UNAVAILABLE', `cannot reach ${service} for ${what} (${detail}); check the endpoint, region and network`);
  }
  if (codes.some((code) => INVALID.has(code))) {
    if (TOO_LARGE_TEXT.test(`${codes.join(' ')} ${detail}`)) {
      return fail(
        'OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER',
        `${service} refused ${what} as too large for ${destination} (${detail}); lower maxPayloadBytes at enqueue, or raise the ${kind}'s limit`,
        true,
      );
    }
    return fail('OUTBOXER_REJECTED', `${service} refused ${what} for ${destination} as invalid (${detail})`, true);
  }
  return fail('OUTBOXER_PUBLISH_FAILED', `${service} failed ${what} on ${destination} (${detail})`);
}

/**
 * One `Failed` entry of a 200 answer: SenderFault true is a fault of the message (permanent), false a fault on
 * the AWS side (retryable); throttling and a refused permission are classified by their code first.
 */
export function entryFailure(failed: FailedEntry, context: AwsCallContext): PublishError {
  const code = bare(failed.Code ?? 'unknown');
  const detail = shortText(`${code}: ${failed.Message ?? 'no message'}`, context.secrets);
  const { service, what, destination, kind } = context;
  if (THROTTLING.has(code)) {
    return new PublishError(
      'OUTBOXER_RATE_LIMITED',
      `${service} throttled ${what} on ${destination} (${detail}); raise the ${kind}'s quota or lower the relay's maxInFlight`,
    );
  }
  if (AUTH.has(code))
    return new PublishError('OUTBOXER_AUTH_FAILED', `${service} refused ${what} on ${destination} for this relay's credentials or permissions (${detail})`);
  if (failed.SenderFault !== true)
    return new PublishError('OUTBOXER_PUBLISH_FAILED', `${service} failed to store ${what} on ${destination} on its side (${detail})`);
  if (TOO_LARGE_TEXT.test(detail)) {
    return new PublishError(
      'OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER',
      `${service} refused ${what} as too large for ${destination} (${detail}); lower maxPayloadBytes at enqueue, or raise the ${kind}'s limit`,
      { permanent: true },
    );
  }
  return new PublishError('OUTBOXER_REJECTED', `${service} refused ${what} for ${destination} (${detail})`, { permanent: true });
}
