import { MessageValidationError } from '../core/errors.js';
import { isUuid } from '../core/ids.js';
import type { MessageHeaders } from '../core/message.js';
import { MalformedMessageError } from './errors.js';

/** A message as a consumer rebuilds it from what the relay published (the same on RabbitMQ and NATS). */
export interface ReceivedMessage<Payload = unknown> {
  /** The outbox id (UUID): the same on every copy, so the inbox deduplicates on it. */
  readonly id: string;
  /** The topic: AMQP routing key, or the NATS subject without the subject prefix. */
  readonly topic: string;
  readonly type: string;
  readonly key: string | null;
  /** The producer's headers (outboxer's own and the broker's are taken out). */
  readonly headers: MessageHeaders;
  /** The payload: the parsed body, or the schema's output when a registry validated it. */
  readonly payload: Payload;
  /** How many times the broker delivered it, this time included, when the broker says (NATS); else 1 or 2 (redelivered). */
  readonly deliveryCount: number;
}

/** The raw parts a broker delivery carries, before validation. */
export interface RawDelivery {
  readonly id: string | undefined;
  readonly type: string | undefined;
  readonly key: string | undefined;
  readonly topic: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly deliveryCount: number;
}

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/**
 * Parses a body as JSON, refusing `__proto__`, `constructor` and `prototype` keys anywhere (a handler that
 * merges the payload into an object must not be able to reach a prototype). Throws MessageValidationError
 * with code OUTBOXER_PAYLOAD_NOT_JSON; the message never quotes the body.
 */
export function parsePayloadJson(body: string, where: string): unknown {
  try {
    return JSON.parse(body, (key: string, value: unknown) => {
      if (FORBIDDEN_KEYS.has(key)) throw new ForbiddenKey(key);
      return value;
    });
  } catch (error) {
    const why = error instanceof ForbiddenKey ? `holds the forbidden key "${error.key}"` : 'is not valid JSON';
    throw new MessageValidationError('OUTBOXER_PAYLOAD_NOT_JSON', `${where}: the body ${why}`);
  }
}

class ForbiddenKey extends Error {
  constructor(readonly key: string) {
    super(key);
  }
}

/**
 * A delivery's identity: its UUID id (lowercase) and a usable type, or MalformedMessageError. Without
 * an id nothing can be recorded, so such a delivery is rejected at the broker (and logged, without its body).
 */
export function identify(raw: RawDelivery): { id: string; type: string } {
  const id = raw.id?.toLowerCase();
  if (id === undefined || !isUuid(id)) {
    throw new MalformedMessageError(`delivery on ${JSON.stringify(raw.topic.slice(0, 100))} carries no UUID message id`);
  }
  if (raw.type === undefined || raw.type === '' || Buffer.byteLength(raw.type) > 255 || CONTROL_CHARACTER.test(raw.type)) {
    throw new MalformedMessageError(`message ${id} carries no usable type (1 to 255 bytes, no control characters)`);
  }
  return { id, type: raw.type };
}

/** Rebuilds the message; throws MessageValidationError (malformed identity or a body that is not JSON). */
export function rebuildMessage(raw: RawDelivery): ReceivedMessage {
  const { id, type } = identify(raw);
  return Object.freeze({
    id,
    type,
    topic: raw.topic,
    key: raw.key === undefined || raw.key === '' ? null : raw.key,
    headers: Object.freeze({ ...raw.headers }),
    payload: parsePayloadJson(raw.body, `message ${id}`),
    deliveryCount: raw.deliveryCount,
  });
}
