import { type OutboxerErrorCode, PublishError } from '../../core/errors.js';
import { bodyBytes, type OutboxMessage } from '../../core/message.js';

/** Attributes outboxer sets on every Pub/Sub message (lowercase, as the CloudEvents Pub/Sub binding names `content-type`). */
export const PubSubAttributeNames = Object.freeze({
  id: 'outbox-id',
  type: 'outbox-type',
  /** Present only when the message has a key. */
  key: 'outbox-key',
  contentType: 'content-type',
});

/** Limits of the Pub/Sub API (cloud.google.com/pubsub/quotas#resource_limits). */
export const PUBSUB_LIMITS = Object.freeze({
  /** Data, attributes and ordering key of one message. Google states 10 MB; the decimal value is the safe reading. */
  messageBytes: 10_000_000,
  attributes: 100,
  attributeKeyBytes: 256,
  attributeValueBytes: 1024,
  topicIdMinLength: 3,
  topicIdMaxLength: 255,
});

/** One message as `topic.publishMessage` takes it. */
export interface PubSubPublication {
  readonly data: Buffer;
  readonly attributes: Readonly<Record<string, string>>;
  readonly orderingKey?: string;
  /** Data, attribute keys and values, and ordering key, in bytes: what Pub/Sub counts against its 10 MB. */
  readonly bytes: number;
}

const OWN_ATTRIBUTES: ReadonlySet<string> = new Set(Object.values(PubSubAttributeNames));
/** A topic id Pub/Sub accepts: a letter first, then letters, digits and `- _ . ~ + %`. */
const TOPIC_ID = /^[A-Za-z][A-Za-z0-9\-_.~+%]*$/;

function refuse(message: OutboxMessage, code: OutboxerErrorCode, problem: string): never {
  throw new PublishError(code, `message ${message.id} cannot be published to Pub/Sub: ${problem}`, { permanent: true });
}

/**
 * The Pub/Sub topic id of a message: `topicPrefix` then the topic, with the two characters an outbox topic may hold
 * and a topic id may not percent-encoded (`:` as `%3A`, `/` as `%2F`; `%` is allowed in topic ids). A result that
 * is still not a topic id (no letter first without a prefix, under 3 or over 255 characters, `goog` first) is
 * refused with a permanent OUTBOXER_INVALID_TOPIC.
 */
export function topicIdFor(message: OutboxMessage, prefix: string): string {
  const id = `${prefix}${message.topic.replaceAll(':', '%3A').replaceAll('/', '%2F')}`;
  const { topicIdMinLength: min, topicIdMaxLength: max } = PUBSUB_LIMITS;
  if (!TOPIC_ID.test(id) || id.length < min || id.length > max || id.toLowerCase().startsWith('goog')) {
    refuse(
      message,
      'OUTBOXER_INVALID_TOPIC',
      `topic ${JSON.stringify(message.topic.slice(0, 80))} maps to the topic id ${JSON.stringify(id.slice(0, 80))}, which Pub/Sub does not allow (${min} to ${max} characters, a letter first, not "goog" first); set a topicPrefix that starts with a letter, or rename the topic`,
    );
  }
  return id;
}

function attribute(message: OutboxMessage, attributes: Record<string, string>, name: string, value: string): void {
  if (Buffer.byteLength(name) > PUBSUB_LIMITS.attributeKeyBytes) {
    refuse(
      message,
      'OUTBOXER_INVALID_HEADER',
      `header name ${JSON.stringify(name.slice(0, 60))} is over ${PUBSUB_LIMITS.attributeKeyBytes} bytes, the longest attribute key Pub/Sub takes`,
    );
  }
  if (Buffer.byteLength(value) > PUBSUB_LIMITS.attributeValueBytes) {
    refuse(
      message,
      'OUTBOXER_INVALID_HEADER',
      `the value of "${name.slice(0, 60)}" is ${Buffer.byteLength(value)} bytes, over the ${PUBSUB_LIMITS.attributeValueBytes} bytes Pub/Sub takes for an attribute value; shorten it at enqueue`,
    );
  }
  attributes[name] = value;
}

/**
 * The wire form of one outbox message: data = the stored body byte for byte; attributes = the message headers as
 * they are, then `outbox-id`, `outbox-type`, `outbox-key` (when it has a key) and `content-type`, which win over
 * headers of the same name (compared without case); ordering key = the key when `ordering` is on. Refuses with a
 * permanent OUTBOXER_INVALID_HEADER what Pub/Sub attributes cannot hold (a header named `goog*`, a value over 1024
 * bytes, more than 100 attributes) and with OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER a message over 10 MB.
 */
export function toPubSubPublication(message: OutboxMessage, ordering: boolean): PubSubPublication {
  const attributes: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers)) {
    const lower = name.toLowerCase();
    if (OWN_ATTRIBUTES.has(lower)) continue;
    if (lower.startsWith('goog'))
      refuse(message, 'OUTBOXER_INVALID_HEADER', `header "${name.slice(0, 60)}" starts with "goog", which Google reserves for attribute keys`);
    attribute(message, attributes, name, value);
  }
  attribute(message, attributes, PubSubAttributeNames.id, message.id);
  attribute(message, attributes, PubSubAttributeNames.type, message.type);
  if (message.key !== null) attribute(message, attributes, PubSubAttributeNames.key, message.key);
  attribute(message, attributes, PubSubAttributeNames.contentType, message.contentType);
  const count = Object.keys(attributes).length;
  if (count > PUBSUB_LIMITS.attributes) {
    refuse(
      message,
      'OUTBOXER_INVALID_HEADER',
      `it would carry ${count} attributes (its headers plus outboxer's 3 or 4), over the ${PUBSUB_LIMITS.attributes} Pub/Sub takes`,
    );
  }
  const data = bodyBytes(message.body);
  const orderingKey = ordering && message.key !== null ? message.key : undefined;
  let bytes = data.length + (orderingKey === undefined ? 0 : Buffer.byteLength(orderingKey));
  for (const [name, value] of Object.entries(attributes)) bytes += Buffer.byteLength(name) + Buffer.byteLength(value);
  if (bytes > PUBSUB_LIMITS.messageBytes) {
    refuse(
      message,
      'OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER',
      `it is ${bytes} bytes with its attributes, over the ${PUBSUB_LIMITS.messageBytes} bytes of one Pub/Sub message; lower maxPayloadBytes at enqueue`,
    );
  }
  return orderingKey === undefined ? { data, attributes, bytes } : { data, attributes, orderingKey, bytes };
}
