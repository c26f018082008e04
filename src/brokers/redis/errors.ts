import { type OutboxerErrorCode, PublishError } from '../../core/errors.js';
import { scrubSecrets } from '../../core/redact.js';

/** What a publish was doing when it failed, to name it in the error. */
export interface PublishContext {
  readonly id: string;
  readonly stream: string;
  /** The redacted URL. */
  readonly where: string;
  readonly secrets: readonly string[];
}

const MAYBE_STORED = 'it may have been stored; a retry adds a second entry with the same id, which consumers skip';

/** Server error replies that say the credentials (or the ACL user) were refused. */
const AUTH_REFUSED = /^(WRONGPASS|NOAUTH|NOPERM)\b|^ERR AUTH\b|^ERR (invalid password|Client sent AUTH)/;
/** Socket-level failures: the server is out of reach or the connection broke. */
const UNREACHABLE_NAMES = new Set([
  'SocketClosedUnexpectedlyError',
  'ClientOfflineError',
  'ClientClosedError',
  'DisconnectsClientError',
  'ConnectionTimeoutError',
  'SocketTimeoutError',
  'ReconnectStrategyError',
]);
const UNREACHABLE_CODES = /^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|ECONNABORTED)$/;

function nameOf(error: unknown): string {
  return error instanceof Error ? (error.constructor?.name ?? error.name) : '';
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A server error reply (`-ERR ...`, `-WRONGTYPE ...`): node-redis throws them as ErrorReply subclasses. */
function isErrorReply(error: unknown): boolean {
  return /^(ErrorReply|SimpleError|BlobError)$/.test(nameOf(error));
}

/** A driver message, secrets removed and shortened. */
export function driverMessage(error: unknown, secrets: readonly string[]): string {
  const text = scrubSecrets(`${nameOf(error) || 'error'}: ${messageOf(error)}`, secrets);
  return text.length > 300 ? `${text.slice(0, 299)}…` : text;
}

/** The error as a cause only when neither its message nor its stack holds a secret. */
function safeCause(error: unknown, secrets: readonly string[]): { cause?: unknown } {
  const text = error instanceof Error ? `${error.message}\n${error.stack ?? ''}` : String(error);
  return scrubSecrets(text, secrets) === text ? { cause: error } : {};
}

export function isAuthRefusal(error: unknown): boolean {
  return isErrorReply(error) && AUTH_REFUSED.test(messageOf(error));
}

export function isUnreachable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return UNREACHABLE_NAMES.has(nameOf(error)) || (typeof code === 'string' && UNREACHABLE_CODES.test(code));
}

/** A failure to get a usable connection at all: refused credentials, a server that is not Redis, or an outage. */
export function toConnectError(error: unknown, where: string, secrets: readonly string[]): PublishError {
  const detail = driverMessage(error, secrets);
  const cause = safeCause(error, secrets);
  if (isAuthRefusal(error)) {
    return new PublishError(
      'OUTBOXER_AUTH_FAILED',
      `Redis at ${where} refused the credentials (${detail}): check the user and password of the URL, and the user's ACL`,
      cause,
    );
  }
  if (isErrorReply(error) && /^ERR (DB index is out of range|invalid DB index)/.test(messageOf(error))) {
    return new PublishError('OUTBOXER_WRONG_PROTOCOL', `Redis at ${where} has no such database (${detail}): fix the /<db> of the URL`, cause);
  }
  if (/Protocol error|Parse ?Error|unexpected type|Unknown RESP type/i.test(`${nameOf(error)} ${messageOf(error)}`)) {
    return new PublishError(
      'OUTBOXER_WRONG_PROTOCOL',
      `the server at ${where} does not speak RESP (${detail}): is that Redis's port (6379, or the TLS port with rediss://)?`,
      cause,
    );
  }
  return new PublishError('OUTBOXER_BROKER_UNAVAILABLE', `cannot connect to Redis at ${where} (${detail})`, cause);
}

/**
 * Turns whatever an XADD (or its WAIT) failed with into a PublishError with a stable code. The message says what
 * happened, never what the relay does next.
 */
export function toPublishError(error: unknown, context: PublishContext): PublishError {
  if (error instanceof PublishError) return error;
  const { id, stream, where, secrets } = context;
  const detail = driverMessage(error, secrets);
  const cause = safeCause(error, secrets);
  const fail = (code: OutboxerErrorCode, message: string): PublishError => new PublishError(code, message, cause);
  const text = messageOf(error);
  if (isErrorReply(error)) {
    if (text.startsWith('WRONGTYPE')) {
      return fail(
        'OUTBOXER_NO_STREAM',
        `message ${id} was not stored: key "${stream}" at ${where} holds a value that is not a stream (${detail}); rename or delete that key, or set a streamPrefix that keeps outboxer's streams apart`,
      );
    }
    if (text.startsWith('OOM')) {
      return fail(
        'OUTBOXER_PUBLISH_FAILED',
        `message ${id} was not stored: Redis at ${where} reached maxmemory (${detail}); consumers must trim or delete entries (or use maxLen), or raise maxmemory`,
      );
    }
    if (isAuthRefusal(error)) {
      return fail(
        'OUTBOXER_AUTH_FAILED',
        `message ${id} was not stored: Redis at ${where} refused this user (${detail}); check the URL's credentials and that the user's ACL allows XADD on "${stream}"`,
      );
    }
    if (/^(LOADING|BUSY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN)\b/.test(text)) {
      return fail('OUTBOXER_BROKER_UNAVAILABLE', `message ${id} was not stored: Redis at ${where} cannot take writes now (${detail})`);
    }
    if (text.startsWith('READONLY')) {
      return fail('OUTBOXER_PUBLISH_FAILED', `message ${id} was not stored: ${where} is a read-only replica (${detail}); point url at the primary`);
    }
    return fail('OUTBOXER_PUBLISH_FAILED', `Redis at ${where} refused message ${id} for stream "${stream}" (${detail})`);
  }
  if (isUnreachable(error)) {
    return fail(
      'OUTBOXER_BROKER_UNAVAILABLE',
      `the connection to Redis at ${where} failed before the XADD reply for message ${id} (${detail}); ${MAYBE_STORED}`,
    );
  }
  return fail('OUTBOXER_PUBLISH_FAILED', `publishing message ${id} to stream "${stream}" failed (${detail})`);
}

/**
 * The publish timed out. Still waiting for a connection, the XADD was never written, so nothing can have been
 * stored: that is the broker being unavailable (released uncounted), not a timeout that uses up an attempt.
 */
export function timeoutError(id: string, timeoutMs: number, stage: 'connecting' | 'reply' | 'replicas'): PublishError {
  if (stage === 'connecting') {
    return new PublishError(
      'OUTBOXER_BROKER_UNAVAILABLE',
      `message ${id} was not sent to Redis: no ready connection within publishTimeoutMs (${timeoutMs} ms)`,
    );
  }
  const what = { reply: `no XADD reply; ${MAYBE_STORED}`, replicas: `stored on the primary, still waiting for WAIT; ${MAYBE_STORED}` }[stage];
  return new PublishError('OUTBOXER_PUBLISH_TIMEOUT', `message ${id} was not confirmed by Redis within publishTimeoutMs (${timeoutMs} ms): ${what}`);
}

export function replicasMissing(id: string, stream: string, acknowledged: number, wanted: number, waitTimeoutMs: number): PublishError {
  return new PublishError(
    'OUTBOXER_PUBLISH_TIMEOUT',
    `message ${id} is on the primary in stream "${stream}" but only ${acknowledged} of ${wanted} replicas (waitReplicas) acknowledged it within waitTimeoutMs (${waitTimeoutMs} ms); a retry adds a second entry with the same id, which consumers skip`,
  );
}
