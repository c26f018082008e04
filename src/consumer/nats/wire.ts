import type { JsMsg } from '@nats-io/jetstream';
import { NatsHeaderNames } from '../../publishers/nats/wire.js';
import type { RawDelivery } from '../received-message.js';

const OWN_HEADERS = new Set(Object.values(NatsHeaderNames).map((name) => name.toLowerCase()));

/**
 * Rebuilds what the relay published (docs/publishers/nats.md): id from `Nats-Msg-Id` (or `Outbox-Id`),
 * type from `Outbox-Type`, key from `Outbox-Key`, topic from the subject without the prefix, the data as
 * the payload JSON, and the producer's headers (outboxer's own and `Nats-*` ones taken out).
 */
export function rawDeliveryOf(message: JsMsg, subjectPrefix: string | undefined): RawDelivery {
  const get = (name: string): string | undefined => (message.headers?.has(name) === true ? message.headers.get(name) : undefined);
  const headers: Record<string, string> = {};
  for (const [name, values] of message.headers ?? []) {
    const lower = name.toLowerCase();
    if (OWN_HEADERS.has(lower) || lower.startsWith('nats-') || name === '__proto__') continue;
    headers[name] = values[0] ?? '';
  }
  const prefix = subjectPrefix === undefined ? '' : `${subjectPrefix}.`;
  return {
    id: get(NatsHeaderNames.msgId) ?? get(NatsHeaderNames.id),
    type: get(NatsHeaderNames.type),
    key: get(NatsHeaderNames.key),
    topic: prefix !== '' && message.subject.startsWith(prefix) ? message.subject.slice(prefix.length) : message.subject,
    headers,
    body: new TextDecoder().decode(message.data),
    deliveryCount: message.info.deliveryCount,
  };
}
