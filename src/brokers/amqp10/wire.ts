import rhea, { type Message } from 'rhea';
import { PublishError } from '../../core/errors.js';
import { bodyBytes, WellKnownHeaders, type OutboxMessage } from '../../core/message.js';
import { TOPIC_PLACEHOLDER } from './options.js';

/** Application properties outboxer sets on every message, next to the message's own headers (ours win). */
export const Amqp10PropertyNames = Object.freeze({
  type: 'outbox-type',
  /** Present only when the message has a key. */
  key: 'outbox-key',
});

/**
 * The wire form of one outbox message:
 * - `message_id` = the outbox id (brokers with duplicate detection, such as Service Bus, use it);
 * - `subject` = the type (Service Bus shows it as Subject/Label);
 * - `group_id` = the key, when there is one (Service Bus sessions: SessionId; partitioned entities hash it);
 * - `correlation_id` = the `correlation-id` header, when there is one;
 * - `content_type`, `creation_time` = the stored ones; header `durable` = true;
 * - `application_properties` = the headers, plus `outbox-type` and `outbox-key`;
 * - the body: the stored bytes as one `data` section, so that every consumer gets them unchanged.
 */
export function toAmqp10Message(message: OutboxMessage): Message {
  const properties: Record<string, string> = { ...message.headers, [Amqp10PropertyNames.type]: message.type };
  if (message.key === null) delete properties[Amqp10PropertyNames.key];
  else properties[Amqp10PropertyNames.key] = message.key;
  const wire: Message = {
    durable: true,
    message_id: message.id,
    subject: message.type,
    content_type: message.contentType,
    application_properties: properties,
    body: rhea.message.data_section(bodyBytes(message.body)) as unknown,
  };
  if (Number.isFinite(message.createdAt.getTime())) wire.creation_time = message.createdAt;
  if (message.key !== null) wire.group_id = message.key;
  const correlationId = message.headers[WellKnownHeaders.correlationId];
  if (correlationId !== undefined) wire.correlation_id = correlationId;
  return wire;
}

/** The target address of a topic: the `address` template with `{topic}` replaced. */
export function addressFor(message: OutboxMessage, template: string): string {
  if (message.topic === '' || /[\u0000-\u001f\u007f]/.test(message.topic)) {
    throw new PublishError('OUTBOXER_INVALID_TOPIC', `message ${message.id}: its topic cannot be part of an AMQP address (empty, or control characters)`, {
      permanent: true,
    });
  }
  return template.replace(TOPIC_PLACEHOLDER, () => message.topic);
}
