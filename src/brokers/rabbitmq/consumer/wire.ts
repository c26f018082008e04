import type { Message } from 'amqplib';
import { OutboxAmqpHeaders } from '../amqp-headers.js';
import type { DeliverySource } from '../../../consumer/delivery-instrumentation.js';
import type { RawDelivery } from '../../../consumer/received-message.js';

/** Headers RabbitMQ adds when dead-lettering or counting deliveries: not the producer's. */
const BROKER_HEADER = /^x-(death|first-death-|last-death-|delivery-count|received-from)/i;
const OWN_HEADERS = new Set<string>(Object.values(OutboxAmqpHeaders));
/** CloudEvents attributes as the AMQP binding names them (either separator), and as Knative's RabbitMQ binding does. */
const CLOUD_EVENT_ATTRIBUTE = /^(cloudEvents[_:]|ce-)/;

function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return undefined;
}

/** A CloudEvents attribute under any of the prefixes receivers are asked to understand. */
function cloudEventAttribute(headers: Record<string, unknown>, name: string): string | undefined {
  return text(headers[`cloudEvents_${name}`]) ?? text(headers[`cloudEvents:${name}`]) ?? text(headers[`ce-${name}`]);
}

/**
 * Rebuilds what the relay published (docs/publishers/rabbitmq.md): id from `message-id` (or `x-outbox-id`,
 * or a CloudEvent's id), type from `type` (or `x-outbox-type`, or the CloudEvent's type), key from
 * `x-outbox-key`, topic from the routing key, the body bytes with their `content-type`, and the producer's
 * string headers (CloudEvents attributes taken out).
 */
export function rawDeliveryOf(delivery: Message): RawDelivery {
  const amqpHeaders = delivery.properties.headers ?? {};
  const isCloudEvent = cloudEventAttribute(amqpHeaders, 'specversion') !== undefined;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(amqpHeaders)) {
    const asText = text(value);
    if (asText === undefined || OWN_HEADERS.has(name) || BROKER_HEADER.test(name) || name === '__proto__') continue;
    if (isCloudEvent && CLOUD_EVENT_ATTRIBUTE.test(name)) continue;
    headers[name] = asText;
  }
  const deliveryCount = typeof amqpHeaders['x-delivery-count'] === 'number' ? amqpHeaders['x-delivery-count'] + 1 : delivery.fields.redelivered ? 2 : 1;
  return {
    id: text(delivery.properties.messageId) ?? text(amqpHeaders[OutboxAmqpHeaders.id]) ?? cloudEventAttribute(amqpHeaders, 'id'),
    type: text(delivery.properties.type) ?? text(amqpHeaders[OutboxAmqpHeaders.type]) ?? cloudEventAttribute(amqpHeaders, 'type'),
    key: text(amqpHeaders[OutboxAmqpHeaders.key]),
    topic: delivery.fields.routingKey,
    headers,
    body: delivery.content,
    contentType: text(delivery.properties.contentType),
    deliveryCount,
  };
}

/**
 * The delivery's source as the messaging conventions name a RabbitMQ destination: `{exchange}:{routing key}:{queue}`,
 * empty parts left out, the routing key once when it equals the queue.
 */
export function deliverySourceOf(delivery: Message, queue: string): DeliverySource {
  const { exchange, routingKey } = delivery.fields;
  const parts = [exchange, routingKey, routingKey === queue ? '' : queue].filter((part) => part !== '');
  return { system: 'rabbitmq', destination: parts.join(':'), subscription: queue, routingKey };
}
