/**
 * Every error outboxer throws is an OutboxerError with a stable `code`.
 * Messages name the message id or option and the fix; never a payload or a password.
 */
export type OutboxerErrorCode =
  | 'OUTBOXER_INVALID_OPTION'
  | 'OUTBOXER_INVALID_IDENTIFIER'
  | 'OUTBOXER_TOPIC_REQUIRED'
  | 'OUTBOXER_INVALID_TOPIC'
  | 'OUTBOXER_TYPE_REQUIRED'
  | 'OUTBOXER_INVALID_ID'
  | 'OUTBOXER_INVALID_KEY'
  | 'OUTBOXER_INVALID_DESTINATION'
  | 'OUTBOXER_UNKNOWN_DESTINATION'
  | 'OUTBOXER_PAYLOAD_NOT_JSON'
  | 'OUTBOXER_SCHEMA_MISMATCH'
  | 'OUTBOXER_INVALID_CONTENT_TYPE'
  | 'OUTBOXER_UNKNOWN_FIELD'
  | 'OUTBOXER_PAYLOAD_TOO_LARGE'
  | 'OUTBOXER_INVALID_HEADER'
  | 'OUTBOXER_INVALID_SCHEDULE'
  | 'OUTBOXER_NOT_MIGRATED'
  | 'OUTBOXER_PUBLISH_FAILED'
  | 'OUTBOXER_PUBLISH_TIMEOUT'
  | 'OUTBOXER_BROKER_UNAVAILABLE'
  | 'OUTBOXER_UNROUTABLE'
  | 'OUTBOXER_RATE_LIMITED'
  | 'OUTBOXER_REJECTED'
  | 'OUTBOXER_NO_STREAM'
  | 'OUTBOXER_NO_EXCHANGE'
  | 'OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER'
  | 'OUTBOXER_CLOSED'
  | 'OUTBOXER_UNKNOWN_TYPE'
  | 'OUTBOXER_MALFORMED_MESSAGE'
  | 'OUTBOXER_NOT_FOUND'
  | 'OUTBOXER_NOT_IN_TRANSACTION'
  | 'OUTBOXER_WRONG_DIALECT'
  | 'OUTBOXER_DATABASE_UNAVAILABLE'
  | 'OUTBOXER_DATABASE_NOT_FOUND'
  | 'OUTBOXER_AUTH_FAILED'
  | 'OUTBOXER_PERMISSION_DENIED'
  | 'OUTBOXER_VHOST_REFUSED'
  | 'OUTBOXER_WRONG_PROTOCOL'
  | 'OUTBOXER_EXCHANGE_REFUSED'
  | 'OUTBOXER_RESIZE_IN_PROGRESS'
  | 'OUTBOXER_LOCK_TIMEOUT'
  | 'OUTBOXER_RESIZE_TIMEOUT'
  | 'OUTBOXER_RESIZE_CANCELLED'
  | OperationsErrorCode;

/**
 * The codes of the CLI and of the HTTP server of operations (docs/errors.md, "The CLI"; docs/http-api.md,
 * "Errors"). Listed here so that every outboxer error shares one code type, though only src/ops throws them.
 */
export type OperationsErrorCode =
  | 'OUTBOXER_USAGE'
  | 'OUTBOXER_MISSING_DEPENDENCY'
  | 'OUTBOXER_NOT_SUPPORTED'
  | 'OUTBOXER_TARGETED_FAILURE'
  | 'OUTBOXER_BAD_REQUEST_TARGET'
  | 'OUTBOXER_INVALID_PATH'
  | 'OUTBOXER_INVALID_QUERY'
  | 'OUTBOXER_INVALID_JSON'
  | 'OUTBOXER_INVALID_REQUEST'
  | 'OUTBOXER_UNAUTHORIZED'
  | 'OUTBOXER_ADMIN_DISABLED'
  | 'OUTBOXER_HOST_REFUSED'
  | 'OUTBOXER_METHOD_NOT_ALLOWED'
  | 'OUTBOXER_BODY_TOO_LARGE'
  | 'OUTBOXER_UNSUPPORTED_MEDIA_TYPE'
  | 'OUTBOXER_BUSY'
  | 'OUTBOXER_STORE_FAILED';

/**
 * The base of every outboxer error, the CLI's and the HTTP server's included. A subclass thrown with fewer codes
 * narrows `code` with a `declare` field (the CLI's `CliFailureCode`, the HTTP server's `OpsHttpErrorCode`).
 */
export class OutboxerError extends Error {
  readonly code: OutboxerErrorCode;

  constructor(code: OutboxerErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
  }
}

/** A message rejected at enqueue: the caller's transaction should roll back or fix the input. */
export class MessageValidationError extends OutboxerError {}

/** An option or identifier that cannot be used; thrown once, when options are resolved. */
export class ConfigurationError extends OutboxerError {
  /** The options at fault, as paths (`leaseMs`, `retry.maxDelayMs`), so a caller can name its own setting for each. */
  readonly options: readonly string[];

  constructor(code: OutboxerErrorCode, message: string, options: { options?: readonly string[]; cause?: unknown } = {}) {
    super(code, message, options.cause === undefined ? undefined : { cause: options.cause });
    this.options = Object.freeze([...(options.options ?? [])]);
  }
}

/**
 * A publish that did not get a positive confirmation from the broker. What the relay does about it is
 * decided by its `code` (see `failureAction` in publish-failure.ts); for a code with no fixed meaning,
 * `permanent` errors will never succeed on retry (the message goes dead at once) and the others are
 * retried with backoff until the attempts run out.
 */
export class PublishError extends OutboxerError {
  readonly permanent: boolean;
  /**
   * How long the destination asked to be left alone (an HTTP `Retry-After`): a retried message is not tried
   * again sooner, whatever the retry backoff says. Undefined: the backoff alone decides.
   */
  readonly retryAfterMs: number | undefined;

  constructor(code: OutboxerErrorCode, message: string, options: { permanent?: boolean; cause?: unknown; retryAfterMs?: number } = {}) {
    super(code, message, options.cause === undefined ? undefined : { cause: options.cause });
    this.permanent = options.permanent ?? false;
    this.retryAfterMs = options.retryAfterMs;
  }
}

export function isPermanentPublishError(error: unknown): boolean {
  return error instanceof PublishError && error.permanent;
}

/** A short, payload-free description of any thrown value, fit for the `last_error` column and logs. */
export function describeError(error: unknown, maxLength = 1000): string {
  let text: string;
  if (error instanceof OutboxerError) text = `${error.code}: ${error.message}`;
  else if (error instanceof Error) text = `${error.name}: ${error.message}`;
  else text = `non-error thrown: ${typeof error}`;
  return text.length > maxLength ? `${text.slice(0, maxLength - 1)}…` : text;
}
