import { STATUS_CODES, type IncomingHttpHeaders } from 'node:http';
import { OutboxerError, type OutboxerErrorCode, PublishError } from '../../core/errors.js';
import { redactUrl, scrubSecrets } from '../../core/redact.js';
import type { WebhookEndpoint } from './endpoint.js';

/** What a failed POST was, to name it in the error. */
export interface AttemptContext {
  readonly id: string;
  readonly endpoint: WebhookEndpoint;
  readonly timeoutMs: number;
  readonly maxRetryAfterMs: number;
  readonly secrets: readonly string[];
}

/** Node's codes for a destination out of reach: DNS, TCP, and TLS (certificate or handshake). */
const UNREACHABLE =
  /^(ECONNREFUSED|ECONNRESET|ECONNABORTED|EPIPE|ENOTFOUND|EAI_AGAIN|EAI_FAIL|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EHOSTDOWN|ENETDOWN|EADDRNOTAVAIL|EPROTO|UND_ERR_SOCKET|ERR_TLS_.*|ERR_SSL_.*|CERT_.*|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_.*|HOSTNAME_MISMATCH)$/;

/** The status line without the receiver's own reason phrase (which could say anything). */
function statusLine(status: number): string {
  return `HTTP ${status}${STATUS_CODES[status] === undefined ? '' : ` ${STATUS_CODES[status]}`}`;
}

function one(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** `Retry-After` as milliseconds from now: delay-seconds or an HTTP date (RFC 9110 §10.2.3); undefined if absent or unreadable. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!/[A-Za-z]/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** A redirect target for people: resolved against the origin, credentials hidden, query cut. */
function shownLocation(location: string, origin: string): string {
  try {
    return redactUrl(new URL(location, origin).toString()).replace(/\?.*$/, '?…').slice(0, 300);
  } catch {
    return '(unreadable)';
  }
}

/**
 * The error for an answer other than 2xx. Its message has the status and the fix, never the body.
 * Returns undefined for a 2xx: the receiver confirmed it stored the message.
 */
export function answerError(status: number, headers: IncomingHttpHeaders, context: AttemptContext): PublishError | undefined {
  if (status >= 200 && status < 300) return undefined;
  const { id, endpoint } = context;
  const got = `${endpoint.label} answered ${statusLine(status)} to message ${id}`;
  const fail = (code: OutboxerErrorCode, message: string, options: { permanent?: boolean; retryAfterMs?: number } = {}) =>
    new PublishError(code, message, options);
  if (status >= 300 && status < 400) {
    const location = one(headers.location);
    const target = location === undefined ? 'no Location' : `Location ${shownLocation(location, endpoint.origin)}`;
    return fail(
      'OUTBOXER_PUBLISH_FAILED',
      `${got} with ${target}; redirects are not followed (a POST must not be re-sent elsewhere unseen): put the final URL in the route or url option`,
    );
  }
  if (status === 429 || status === 503) {
    const after = retryAfterMs(one(headers['retry-after']));
    if (after !== undefined) {
      const capped = Math.min(after, context.maxRetryAfterMs);
      return fail(
        'OUTBOXER_RATE_LIMITED',
        `${got} with Retry-After ${Math.ceil(after / 1000)} s${capped < after ? ` (honoured up to maxRetryAfterMs, ${capped} ms)` : ''}`,
        { retryAfterMs: capped },
      );
    }
    if (status === 429) return fail('OUTBOXER_RATE_LIMITED', `${got} without Retry-After; retried after the retry backoff`);
  }
  if (status === 408 || status === 425 || status === 429 || status >= 500) {
    return fail('OUTBOXER_PUBLISH_FAILED', `${got}; the receiver failed or is overloaded, and may not have stored it`);
  }
  if (status === 404 || status === 410) {
    return fail('OUTBOXER_UNROUTABLE', `${got}: the endpoint does not exist there; fix the url of this route (or deploy the receiver), and the topic resumes`);
  }
  if (status === 401 || status === 403) {
    return fail(
      'OUTBOXER_AUTH_FAILED',
      `${got}: the receiver refuses this sender; check the secret (the receiver's must be among the secret option) and the authorization headers`,
    );
  }
  if (status === 413) {
    return fail(
      'OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER',
      `${got}: the body is larger than the receiver accepts; raise its limit or lower maxPayloadBytes at enqueue`,
      { permanent: true },
    );
  }
  return fail('OUTBOXER_REJECTED', `${got}: the receiver refused this message; fix the receiver or the message`, { permanent: true });
}

function* causeChain(error: unknown): Generator {
  let current = error;
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth++) {
    yield current;
    current = current instanceof Error ? current.cause : undefined;
  }
}

function codeOf(error: unknown): string | undefined {
  for (const link of causeChain(error)) {
    const code = (link as { code?: unknown } | null)?.code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/** The error to ride along as `cause`, or undefined if any message in its chain holds a secret. */
function safeCause(error: unknown, secrets: readonly string[]): { cause?: unknown } {
  for (const link of causeChain(error)) {
    const text = link instanceof Error ? `${link.message}\n${link.stack ?? ''}` : String(link);
    if (scrubSecrets(text, secrets) !== text) return {};
  }
  return { cause: error };
}

/** A failure before any answer: the request could not be made, or the connection broke. */
export function requestError(error: unknown, context: AttemptContext): OutboxerError {
  if (error instanceof OutboxerError) return error;
  const { id, endpoint, secrets } = context;
  const code = codeOf(error) ?? 'unknown';
  const detail = scrubSecrets(error instanceof Error ? error.message : String(error), secrets).slice(0, 200);
  const cause = safeCause(error, secrets);
  if (UNREACHABLE.test(code)) {
    return new PublishError(
      'OUTBOXER_BROKER_UNAVAILABLE',
      `cannot deliver message ${id} to ${endpoint.label}: ${code} (${detail}); it may have been received if the connection broke after sending, and the receiver deduplicates by webhook-id`,
      cause,
    );
  }
  if (code.startsWith('HPE_')) {
    return new PublishError(
      'OUTBOXER_WRONG_PROTOCOL',
      `${endpoint.label} did not answer in HTTP to message ${id} (${code}); check the scheme and port of the url`,
      cause,
    );
  }
  if (code === 'ERR_INVALID_CHAR' || code === 'ERR_INVALID_HTTP_TOKEN') {
    return new PublishError('OUTBOXER_INVALID_HEADER', `message ${id} has a header HTTP cannot carry (${code})`, { ...cause, permanent: true });
  }
  return new PublishError('OUTBOXER_PUBLISH_FAILED', `POST of message ${id} to ${endpoint.label} failed: ${code} (${detail})`, cause);
}

export function timeoutError(context: AttemptContext, sent: boolean): PublishError {
  const { id, endpoint, timeoutMs } = context;
  return sent
    ? new PublishError(
        'OUTBOXER_PUBLISH_TIMEOUT',
        `no answer from ${endpoint.label} to message ${id} within ${timeoutMs} ms (publishTimeoutMs); it may have been received, and the receiver deduplicates the retry by webhook-id`,
      )
    : new PublishError(
        'OUTBOXER_PUBLISH_TIMEOUT',
        `message ${id} waited ${timeoutMs} ms (publishTimeoutMs) for a request slot to ${endpoint.origin} and was not sent; the receiver is slower than the load (maxConcurrencyPerEndpoint)`,
      );
}
