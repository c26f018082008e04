import type { JsMsg } from '@nats-io/jetstream';
import { decodeHeaderValue } from '../../header-value.js';
import { CLOUD_EVENTS_NATS_PREFIX, NatsHeaderNames } from '../wire.js';
import type { DeliverySource } from '../../../consumer/delivery-instrumentation.js';
import type { RawDelivery } from '../../../consumer/received-message.js';

const OWN_HEADERS = new Set(Object.values(NatsHeaderNames).map((name) => name.toLowerCase()));

/**
 * Rebuilds what the relay published (docs/publishers/nats.md): id from `Nats-Msg-Id` (or `Outbox-Id`, or a
 * CloudEvent's `ce-id`), type from `Outbox-Type` (or `ce-type`), key from `Outbox-Key`, topic from the subject
 * without the prefix, the data as the body with its `Content-Type`, and the producer's headers (outboxer's own,
 * `Nats-*` ones and the CloudEvents attributes taken out). Header values but Content-Type are percent-decoded.
 */
export function rawDeliveryOf(message: JsMsg, subjectPrefix: string | undefined): RawDelivery {
  const raw = (name: string): string | undefined => (message.headers?.has(name) === true ? message.headers.get(name) : undefined);
  const get = (name: string): string | undefined => {
    const value = raw(name);
    return value === undefined ? undefined : decodeHeaderValue(value);
  };
  const isCloudEvent = get(`${CLOUD_EVENTS_NATS_PREFIX}specversion`) !== undefined;
  const headers: Record<string, string> = {};
  for (const [name, values] of message.headers ?? []) {
    const lower = name.toLowerCase();
    if (OWN_HEADERS.has(lower) || lower.startsWith('nats-') || name === '__proto__') continue;
    if (isCloudEvent && lower.startsWith(CLOUD_EVENTS_NATS_PREFIX)) continue;
    headers[name] = decodeHeaderValue(values[0] ?? '');
  }
  const prefix = subjectPrefix === undefined ? '' : `${subjectPrefix}.`;
  return {
    id: get(NatsHeaderNames.msgId) ?? get(NatsHeaderNames.id) ?? get(`${CLOUD_EVENTS_NATS_PREFIX}id`),
    type: get(NatsHeaderNames.type) ?? get(`${CLOUD_EVENTS_NATS_PREFIX}type`),
    key: get(NatsHeaderNames.key),
    topic: prefix !== '' && message.subject.startsWith(prefix) ? message.subject.slice(prefix.length) : message.subject,
    headers,
    body: message.data,
    contentType: raw(NatsHeaderNames.contentType) ?? get(`${CLOUD_EVENTS_NATS_PREFIX}datacontenttype`),
    deliveryCount: message.info.deliveryCount,
  };
}

/** The delivery's source: its subject (the subject prefix included) and the durable consumer it came through. */
export function deliverySourceOf(message: JsMsg, durable: string): DeliverySource {
  return { system: 'nats', destination: message.subject, subscription: durable };
}
