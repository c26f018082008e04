import { MessageValidationError } from '../core/errors.js';
import { isUuid } from '../core/ids.js';
import { JSON_CONTENT_TYPE, type MessageHeaders } from '../core/message.js';
import { isJsonContentType } from '../core/message-body.js';
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
  /**
   * The payload: the parsed body of a JSON content type, the body's bytes (`Uint8Array`) for any other, or the
   * schema's output when a registry validated it.
   */
  readonly payload: Payload;
  /** The body's media type as published (`application/json` when the delivery named none). */
  readonly contentType: string;
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
  /** The body bytes exactly as delivered. */
  readonly body: Uint8Array;
  /** The content type the delivery names, if any. */
  readonly contentType: string | undefined;
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

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The payload a handler gets: a JSON content type (or none: outboxer's older wire and many producers send
 * JSON without saying so) is decoded as UTF-8 and parsed; any other content type is handed over as bytes.
 */
export function payloadOf(raw: RawDelivery, where: string): { payload: unknown; contentType: string } {
  const contentType = raw.contentType ?? JSON_CONTENT_TYPE;
  if (!isJsonContentType(contentType)) return { payload: raw.body, contentType };
  let text: string;
  try {
    text = utf8.decode(raw.body);
  } catch {
    throw new MessageValidationError('OUTBOXER_PAYLOAD_NOT_JSON', `${where}: the body is declared ${contentType} but is not valid UTF-8`);
  }
  return { payload: parsePayloadJson(text, where), contentType };
}

/** Rebuilds the message; throws MessageValidationError (malformed identity or a JSON body that does not parse). */
export function rebuildMessage(raw: RawDelivery): ReceivedMessage {
  const { id, type } = identify(raw);
  return Object.freeze({
    id,
    type,
    topic: raw.topic,
    key: raw.key === undefined || raw.key === '' ? null : raw.key,
    headers: Object.freeze({ ...raw.headers }),
    ...payloadOf(raw, `message ${id}`),
    deliveryCount: raw.deliveryCount,
  });
}
