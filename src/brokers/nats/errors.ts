import { OutboxerError, PublishError } from '../../core/errors.js';
import { scrubSecrets } from '../../core/redact.js';

/** What a publish was doing when the driver failed, to name it in the error. */
export interface PublishContext {
  readonly id: string;
  readonly subject: string;
  readonly timeoutMs: number;
  /** The servers, redacted, for people. */
  readonly where: string;
  readonly secrets: readonly string[];
}

/** JetStream API error codes outboxer treats specially. */
const MESSAGE_SIZE_EXCEEDS_MAXIMUM = 10054;
const JETSTREAM_NOT_ENABLED_FOR_ACCOUNT = 10039;

function* causeChain(error: unknown): Generator {
  let current = error;
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth++) {
    yield current;
    current = current instanceof Error ? current.cause : undefined;
  }
}

function nameOf(error: unknown): string {
  return error instanceof Error ? error.name : '';
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The JetStream API error code carried by a JetStreamApiError (in the chain), if any. */
function apiErrorCode(error: unknown): number | undefined {
  for (const link of causeChain(error)) {
    const api = (link as { apiError?: () => { err_code?: unknown } }).apiError;
    if (typeof api === 'function') {
      const code = api.call(link).err_code;
      if (typeof code === 'number') return code;
    }
  }
  return undefined;
}

function isNoResponders(error: unknown): boolean {
  for (const link of causeChain(error)) {
    const name = nameOf(link);
    if (name === 'NoResponders' || name === 'NoRespondersError') return true;
    if (name === 'RequestError' && /no responders/i.test(messageOf(link))) return true;
  }
  return false;
}

/**
 * The driver error itself, fit to ride along as `cause`, or undefined when any message or stack
 * in its chain holds a secret (a cause is printed whole by `util.inspect` and loggers).
 */
export function safeCause(error: unknown, secrets: readonly string[]): unknown {
  for (const link of causeChain(error)) {
    const text = link instanceof Error ? `${link.message}\n${link.stack ?? ''}` : String(link);
    if (scrubSecrets(text, secrets) !== text) return undefined;
  }
  return error;
}

/** A driver message, secrets removed and shortened. */
export function driverMessage(error: unknown, secrets: readonly string[]): string {
  const text = scrubSecrets(`${nameOf(error) || 'error'}: ${messageOf(error)}`, secrets);
  return text.length > 300 ? `${text.slice(0, 299)}…` : text;
}

/**
 * Turns whatever the NATS client threw during a publish into a PublishError with a stable code. Its message says
 * what happened, never what comes next: whether it is retried or parked is the relay's to say.
 */
export function toPublishError(error: unknown, context: PublishContext): OutboxerError {
  if (error instanceof OutboxerError) return error;
  const { id, subject, secrets } = context;
  const cause = safeCause(error, secrets);
  const detail = driverMessage(error, secrets);
  const fail = (code: ConstructorParameters<typeof PublishError>[0], message: string, permanent = false) =>
    new PublishError(code, message, cause === undefined ? { permanent } : { permanent, cause });

  if (isNoResponders(error)) {
    return fail(
      'OUTBOXER_NO_STREAM',
      `no JetStream stream captures subject "${subject}" (NATS answered "no responders" to message ${id}): create a stream whose subjects include "${subject}" (e.g. "${subject.split('.')[0] ?? subject}.>"), or check that JetStream is enabled on ${context.where}`,
    );
  }
  const code = apiErrorCode(error);
  if (code === MESSAGE_SIZE_EXCEEDS_MAXIMUM) {
    return fail(
      'OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER',
      `message ${id} is larger than the max_msg_size of the stream capturing "${subject}" (${detail}); raise the stream's max_msg_size or lower maxPayloadBytes at enqueue`,
      true,
    );
  }
  if (code === JETSTREAM_NOT_ENABLED_FOR_ACCOUNT) {
    return fail('OUTBOXER_PUBLISH_FAILED', `JetStream is not enabled for this account on ${context.where}; message ${id} was not stored (${detail})`);
  }
  if (code !== undefined) {
    return fail('OUTBOXER_PUBLISH_FAILED', `JetStream refused message ${id} on subject "${subject}" (${detail})`);
  }
  const name = nameOf(error);
  const text = messageOf(error);
  if (name === 'InvalidArgumentError' && /max_payload/i.test(text)) {
    return fail(
      'OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER',
      `message ${id} (body plus headers) is over the server's max_payload; lower maxPayloadBytes at enqueue or raise max_payload on the server`,
      true,
    );
  }
  if (name === 'InvalidArgumentError' || name === 'InvalidSubjectError') {
    return fail('OUTBOXER_PUBLISH_FAILED', `message ${id} cannot be sent to NATS as it is (${detail})`, true);
  }
  if (name === 'TimeoutError') {
    return fail(
      'OUTBOXER_PUBLISH_TIMEOUT',
      `no PubAck for message ${id} on subject "${subject}" within ${context.timeoutMs} ms; it may have been stored anyway, and a retry with the same Nats-Msg-Id is deduplicated by the stream within its duplicate_window`,
    );
  }
  if (/^(ClosedConnectionError|DrainingConnectionError|ConnectionError|RequestError|AuthorizationError|UserAuthenticationExpiredError)$/.test(name)) {
    return fail('OUTBOXER_BROKER_UNAVAILABLE', `NATS connection to ${context.where} failed while publishing message ${id} (${detail})`);
  }
  return fail('OUTBOXER_PUBLISH_FAILED', `publishing message ${id} on subject "${subject}" failed (${detail})`);
}

function isAuthFailure(error: unknown): boolean {
  for (const link of causeChain(error)) {
    if (/^(AuthorizationError|UserAuthenticationExpiredError|AuthenticationError)$/.test(nameOf(link))) return true;
    if (/authorization violation|authentication (expired|timeout)/i.test(messageOf(link))) return true;
  }
  return false;
}

/** A failure to get a connection at all: refused credentials (`OUTBOXER_AUTH_FAILED`), or an outage. */
export function toConnectError(error: unknown, context: { where: string; secrets: readonly string[] }): PublishError {
  const cause = safeCause(error, context.secrets);
  if (isAuthFailure(error)) {
    const message = `NATS at ${context.where} refused the credentials (${driverMessage(error, context.secrets)}): check the user and password, or token, of the URL`;
    return new PublishError('OUTBOXER_AUTH_FAILED', message, cause === undefined ? {} : { cause });
  }
  const message = `cannot connect to NATS at ${context.where} (${driverMessage(error, context.secrets)})`;
  return new PublishError('OUTBOXER_BROKER_UNAVAILABLE', message, cause === undefined ? {} : { cause });
}
