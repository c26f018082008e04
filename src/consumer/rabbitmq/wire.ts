import type { ConsumeMessage } from 'amqplib';
import { OutboxAmqpHeaders } from '../../publishers/rabbitmq/amqp-headers.js';
import type { RawDelivery } from '../received-message.js';

/** Headers RabbitMQ adds when dead-lettering or counting deliveries: not the producer's. */
const BROKER_HEADER = /^x-(death|first-death-|last-death-|delivery-count|received-from)/i;
const OWN_HEADERS = new Set<string>(Object.values(OutboxAmqpHeaders));

function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return undefined;
}

/**
 * Rebuilds what the relay published (docs/publishers/rabbitmq.md): id from `message-id` (or `x-outbox-id`),
 * type from `type` (or `x-outbox-type`), key from `x-outbox-key`, topic from the routing key, the body as
 * the payload JSON, and the producer's string headers.
 */
export function rawDeliveryOf(delivery: ConsumeMessage): RawDelivery {
  const amqpHeaders = delivery.properties.headers ?? {};
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(amqpHeaders)) {
    const asText = text(value);
    if (asText === undefined || OWN_HEADERS.has(name) || BROKER_HEADER.test(name) || name === '__proto__') continue;
    headers[name] = asText;
  }
  const deliveryCount = typeof amqpHeaders['x-delivery-count'] === 'number' ? amqpHeaders['x-delivery-count'] + 1 : delivery.fields.redelivered ? 2 : 1;
  return {
    id: text(delivery.properties.messageId) ?? text(amqpHeaders[OutboxAmqpHeaders.id]),
    type: text(delivery.properties.type) ?? text(amqpHeaders[OutboxAmqpHeaders.type]),
    key: text(amqpHeaders[OutboxAmqpHeaders.key]),
    topic: delivery.fields.routingKey,
    headers,
    body: delivery.content.toString('utf8'),
    deliveryCount,
  };
}
