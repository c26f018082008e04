import { OutboxerError, type OutboxerErrorCode, PublishError } from '../../core/errors.js';
import { scrubSecrets } from '../../core/redact.js';

/** gRPC status codes (grpc/doc/statuscodes.md) that outboxer tells apart. */
export const GrpcStatus = Object.freeze({
  CANCELLED: 1,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
});

/** What a publish was doing when the client failed, to name it in the error. */
export interface PublishContext {
  readonly id: string;
  readonly topicId: string;
  /** `project "p"` and the endpoint, for people. */
  readonly where: string;
  readonly timeoutMs: number;
  readonly secrets: readonly string[];
}

/** The gRPC status of a client error (its own, or of the error an ordered-queue PublishError wraps). */
export function grpcStatusOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** The client failed to find credentials (no ADC): google-auth-library says so in words only. */
function isMissingCredentials(error: unknown): boolean {
  return error instanceof Error && /could not load the default credentials|unable to detect a project id/i.test(error.message);
}

/** A driver message, secrets removed and shortened. */
export function driverMessage(error: unknown, secrets: readonly string[]): string {
  const text = scrubSecrets(error instanceof Error ? error.message : String(error), secrets).replace(/\s+/g, ' ');
  return text.length > 300 ? `${text.slice(0, 299)}…` : text;
}

function causeOf(error: unknown, secrets: readonly string[]): { cause?: unknown } {
  if (!(error instanceof Error)) return {};
  const text = `${error.message}\n${error.stack ?? ''}`;
  return scrubSecrets(text, secrets) === text ? { cause: error } : {};
}

const MAYBE_STORED = 'it may have been stored anyway: a retry publishes a second copy with the same outbox-id attribute, which consumers deduplicate';

/**
 * Turns what the client rejected a publish with into a PublishError with a stable code, by gRPC status. The message
 * says what happened, never what comes next: whether it is retried or parked is the relay's to say.
 */
export function toPublishError(error: unknown, context: PublishContext): OutboxerError {
  if (error instanceof OutboxerError) return error;
  const { id, topicId, where, secrets } = context;
  const detail = driverMessage(error, secrets);
  const fail = (code: OutboxerErrorCode, message: string, permanent = false): PublishError =>
    new PublishError(code, message, { permanent, ...causeOf(error, secrets) });
  if (isMissingCredentials(error)) return credentialsError(error, where, secrets);
  switch (grpcStatusOf(error)) {
    case GrpcStatus.NOT_FOUND:
      return fail(
        'OUTBOXER_NO_STREAM',
        `Pub/Sub topic "${topicId}" does not exist in ${where} (message ${id}: ${detail}); create it (gcloud pubsub topics create ${topicId}), with the subscriptions that should receive it`,
      );
    case GrpcStatus.PERMISSION_DENIED:
    case GrpcStatus.UNAUTHENTICATED:
      return fail(
        'OUTBOXER_AUTH_FAILED',
        `Pub/Sub in ${where} refused the relay's credentials for topic "${topicId}" (message ${id}: ${detail}); grant its service account roles/pubsub.publisher on the topic, or fix the credentials`,
      );
    case GrpcStatus.UNAVAILABLE:
    case GrpcStatus.CANCELLED:
      return fail('OUTBOXER_BROKER_UNAVAILABLE', `Pub/Sub in ${where} is unavailable; message ${id} was not confirmed (${detail})`);
    case GrpcStatus.DEADLINE_EXCEEDED:
      return fail(
        'OUTBOXER_PUBLISH_TIMEOUT',
        `no message id from Pub/Sub for message ${id} on topic "${topicId}" within ${context.timeoutMs} ms (${detail}); ${MAYBE_STORED}`,
      );
    case GrpcStatus.RESOURCE_EXHAUSTED:
      return fail('OUTBOXER_PUBLISH_FAILED', `Pub/Sub refused message ${id} for now: a quota or flow limit of ${where} is exhausted (${detail})`);
    case GrpcStatus.INVALID_ARGUMENT:
      return fail('OUTBOXER_PUBLISH_FAILED', `Pub/Sub refused message ${id} on topic "${topicId}" as invalid (${detail})`, true);
    default:
      break;
  }
  if (error instanceof TypeError) return fail('OUTBOXER_PUBLISH_FAILED', `message ${id} cannot be handed to the Pub/Sub client (${detail})`, true);
  return fail('OUTBOXER_PUBLISH_FAILED', `publishing message ${id} to Pub/Sub topic "${topicId}" failed (${detail})`);
}

function credentialsError(error: unknown, where: string, secrets: readonly string[]): PublishError {
  return new PublishError(
    'OUTBOXER_AUTH_FAILED',
    `the Pub/Sub client found no credentials for ${where} (${driverMessage(error, secrets)}); set GOOGLE_APPLICATION_CREDENTIALS, run where a service account is attached, or pass clientConfig.keyFilename`,
    causeOf(error, secrets),
  );
}

/**
 * A failed start check (`verify()`): refused credentials are OUTBOXER_AUTH_FAILED (the relay does not start),
 * anything else an outage (OUTBOXER_BROKER_UNAVAILABLE), which the relay rides out.
 */
export function toVerifyError(error: unknown, where: string, secrets: readonly string[]): PublishError {
  if (isMissingCredentials(error)) return credentialsError(error, where, secrets);
  const detail = driverMessage(error, secrets);
  if (grpcStatusOf(error) === GrpcStatus.UNAUTHENTICATED) {
    return new PublishError(
      'OUTBOXER_AUTH_FAILED',
      `Pub/Sub in ${where} refused the relay's credentials (${detail}); fix the service account key or the credentials the client finds`,
      causeOf(error, secrets),
    );
  }
  return new PublishError('OUTBOXER_BROKER_UNAVAILABLE', `cannot reach Pub/Sub in ${where} (${detail})`, causeOf(error, secrets));
}
