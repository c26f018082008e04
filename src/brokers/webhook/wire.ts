import { PublishError } from '../../core/errors.js';
import type { OutboxMessage } from '../../core/message.js';
import { encodeHeaderValue } from '../header-value.js';
import { signatureHeader } from './signature.js';

/** Request headers outboxer sets on every POST (names in lowercase, as HTTP/2 and Node send them). */
export const WebhookHeaderNames = Object.freeze({
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
  contentType: 'content-type',
  outboxId: 'outbox-id',
  topic: 'outbox-topic',
  type: 'outbox-type',
  key: 'outbox-key',
});

/** HTTP framing and connection headers: a message or an option setting them would corrupt the request. */
const FRAMING = new Set([
  'content-length',
  'transfer-encoding',
  'host',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'proxy-connection',
  'proxy-authorization',
]);

/** Names only the publisher sets: Standard Webhooks headers, ours, content-type and framing. */
export function isReservedHeader(lower: string): boolean {
  return lower.startsWith('webhook-') || lower.startsWith('outbox-') || lower === 'content-type' || FRAMING.has(lower);
}

/** One POST, ready to send: the exact stored bytes and every header but the signature's time-bound ones. */
export interface WebhookRequest {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

/**
 * The headers of a message's POST: its own headers (percent-encoded like the CloudEvents HTTP binding, as
 * on NATS), then the static `headers` option, then ours. A message header the publisher sets itself is refused
 * (permanent OUTBOXER_INVALID_HEADER): a producer must not be able to forge a signature or break the framing.
 */
export function requestHeaders(message: OutboxMessage, staticHeaders: Readonly<Record<string, string>>, body: Buffer): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers)) {
    const lower = name.toLowerCase();
    if (isReservedHeader(lower)) {
      throw new PublishError(
        'OUTBOXER_INVALID_HEADER',
        `message ${message.id}: header ${JSON.stringify(name.slice(0, 60))} is set by the webhook publisher itself (content-type, webhook-*, outbox-* or HTTP framing); rename it`,
        { permanent: true },
      );
    }
    if (lower in staticHeaders) continue; // the configured value wins: it is the operator's
    headers[lower] = encodeHeaderValue(value);
  }
  Object.assign(headers, staticHeaders);
  headers['user-agent'] ??= 'outboxer';
  headers[WebhookHeaderNames.contentType] = message.contentType;
  headers['content-length'] = String(body.length);
  headers[WebhookHeaderNames.id] = message.id;
  headers[WebhookHeaderNames.outboxId] = message.id;
  headers[WebhookHeaderNames.topic] = message.topic;
  headers[WebhookHeaderNames.type] = encodeHeaderValue(message.type);
  if (message.key !== null) headers[WebhookHeaderNames.key] = encodeHeaderValue(message.key);
  return headers;
}

/** Adds the headers of one attempt: its time, and the signature over id, time and body. */
export function signedHeaders(
  headers: Readonly<Record<string, string>>,
  keys: readonly Buffer[],
  id: string,
  body: Buffer,
  now = Date.now(),
): Record<string, string> {
  const timestamp = Math.floor(now / 1000);
  return { ...headers, [WebhookHeaderNames.timestamp]: String(timestamp), [WebhookHeaderNames.signature]: signatureHeader(keys, id, timestamp, body) };
}
