import type { Options } from 'amqplib';
import { PublishError } from '../../core/errors.js';
import { bodyBytes, WellKnownHeaders, type OutboxMessage } from '../../core/message.js';
import { cloudEventAttributes, type ResolvedCloudEvents } from '../cloudevents.js';
import { CLOUD_EVENTS_AMQP_PREFIX, OUTBOXER_APP_ID, OutboxAmqpHeaders } from './amqp-headers.js';

/** AMQP short strings (routing key, type, correlation-id) are at most 255 bytes. */
const MAX_SHORT_STRING_BYTES = 255;

export interface AmqpPublication {
  readonly routingKey: string;
  readonly body: Buffer;
  readonly properties: Options.Publish;
}

/**
 * The wire form of one outbox message: the stored body itself, byte for byte (no envelope), with its
 * content type; the routing key is the topic, and id, type, key and timestamps travel as AMQP properties
 * and headers. With `cloudEvents`, the CloudEvents attributes are added as `cloudEvents_*` headers
 * (binary content mode of the AMQP binding); everything else stays, so existing consumers keep working.
 * Throws a permanent PublishError for a message that AMQP cannot carry (the table contract is checked before,
 * by `publishClaim`).
 */
export function toAmqpPublication(message: OutboxMessage, cloudEvents?: ResolvedCloudEvents): AmqpPublication {
  if (Buffer.byteLength(message.topic) > MAX_SHORT_STRING_BYTES || message.topic === '') {
    throw cannotEncode(message, `its topic must be 1 to ${MAX_SHORT_STRING_BYTES} bytes to be an AMQP routing key`);
  }
  if (Buffer.byteLength(message.type) > MAX_SHORT_STRING_BYTES) {
    throw cannotEncode(message, `its type must be at most ${MAX_SHORT_STRING_BYTES} bytes to be an AMQP type property`);
  }
  const headers: Record<string, unknown> = { ...message.headers };
  headers[OutboxAmqpHeaders.id] = message.id;
  headers[OutboxAmqpHeaders.type] = message.type;
  if (message.key === null) delete headers[OutboxAmqpHeaders.key];
  else headers[OutboxAmqpHeaders.key] = message.key;
  if (cloudEvents !== undefined) {
    for (const [name, value] of Object.entries(cloudEventAttributes(message, cloudEvents))) headers[`${CLOUD_EVENTS_AMQP_PREFIX}${name}`] = value;
  }

  const properties: Options.Publish = {
    persistent: true,
    mandatory: true,
    contentType: message.contentType,
    messageId: message.id,
    type: message.type,
    appId: OUTBOXER_APP_ID,
    headers,
  };
  const seconds = Math.floor(message.createdAt.getTime() / 1000);
  if (Number.isFinite(seconds)) properties.timestamp = seconds;
  const correlationId = message.headers[WellKnownHeaders.correlationId];
  if (correlationId !== undefined && Buffer.byteLength(correlationId) <= MAX_SHORT_STRING_BYTES) {
    properties.correlationId = correlationId;
  }
  return { routingKey: message.topic, body: bodyBytes(message.body), properties };
}

function cannotEncode(message: OutboxMessage, why: string): PublishError {
  return new PublishError('OUTBOXER_PUBLISH_FAILED', `message ${message.id} cannot be published to RabbitMQ: ${why}`, { permanent: true });
}
