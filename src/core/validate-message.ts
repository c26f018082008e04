import { MessageValidationError } from './errors.js';
import { isUuid, newMessageId } from './ids.js';
import type { NewOutboxMessage, OutboxMessageInput } from './message.js';

export interface MessageLimits {
  /** Largest payload accepted at enqueue, in bytes of its JSON text. */
  readonly maxPayloadBytes: number;
}

const TOPIC = /^[A-Za-z0-9_:\-/]+(\.[A-Za-z0-9_:\-/]+)*$/;
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;
/** A `\u0000` escape, or an escaped lone surrogate, not itself escaped: JSON columns refuse both. */
const UNSTORABLE_ESCAPE = /(?:^|[^\\])(?:\\\\)*\\u(?:0000|d[89a-f][0-9a-f]{2})/i;
const HEADER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.\-]*$/;
const TRACEPARENT = /^(?!ff)[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;
const MAX_TOPIC_BYTES = 255;
const MAX_KEY_BYTES = 512;
const MAX_TYPE_BYTES = 255;
const MAX_HEADER_NAME_BYTES = 128;
const MAX_HEADER_VALUE_BYTES = 4096;
const MAX_HEADERS = 64;

/**
 * Checks one message before it is stored, inside the caller's transaction, so that a message the
 * relay could never publish is refused loudly at the source instead of failing later.
 */
export function validateMessage(input: OutboxMessageInput, limits: MessageLimits): NewOutboxMessage {
  const id = input.id === undefined ? newMessageId() : String(input.id).toLowerCase();
  if (!isUuid(id)) fail('OUTBOXER_INVALID_ID', `message id must be a UUID; got ${JSON.stringify(id.slice(0, 60))}`);
  const where = `message ${id}`;

  if (typeof input.topic !== 'string' || input.topic === '') {
    fail('OUTBOXER_TOPIC_REQUIRED', `${where}: topic is required (e.g. "orders.created")`);
  }
  if (!TOPIC.test(input.topic) || Buffer.byteLength(input.topic) > MAX_TOPIC_BYTES) {
    fail(
      'OUTBOXER_INVALID_TOPIC',
      `${where}: topic ${JSON.stringify(input.topic.slice(0, 80))} must match ${TOPIC.source} and be at most ${MAX_TOPIC_BYTES} bytes (no spaces or wildcards)`,
    );
  }
  if (typeof input.type !== 'string' || input.type === '' || Buffer.byteLength(input.type) > MAX_TYPE_BYTES || CONTROL_CHARACTER.test(input.type)) {
    fail('OUTBOXER_TYPE_REQUIRED', `${where}: type is required, a non-empty string of at most ${MAX_TYPE_BYTES} bytes without control characters`);
  }
  const key = input.key ?? null;
  if (key !== null && (typeof key !== 'string' || key === '' || Buffer.byteLength(key) > MAX_KEY_BYTES || CONTROL_CHARACTER.test(key))) {
    fail('OUTBOXER_INVALID_KEY', `${where}: key must be a non-empty string of at most ${MAX_KEY_BYTES} bytes without control characters, or omitted`);
  }

  const idempotencyKey = input.idempotencyKey ?? null;
  if (idempotencyKey !== null && (typeof idempotencyKey !== 'string' || idempotencyKey === '' || Buffer.byteLength(idempotencyKey) > MAX_KEY_BYTES || CONTROL_CHARACTER.test(idempotencyKey))) {
    fail('OUTBOXER_INVALID_KEY', `${where}: idempotencyKey must be a non-empty string of at most ${MAX_KEY_BYTES} bytes without control characters, or omitted`);
  }

  const payloadJson = serializePayload(input.payload, where);
  const payloadBytes = Buffer.byteLength(payloadJson);
  if (payloadBytes > limits.maxPayloadBytes) {
    fail(
      'OUTBOXER_PAYLOAD_TOO_LARGE',
      `${where}: payload is ${payloadBytes} bytes, over the limit of ${limits.maxPayloadBytes}; raise maxPayloadBytes (at most the broker's limit) or store the body elsewhere and send a reference`,
    );
  }

  return Object.freeze({
    id,
    topic: input.topic,
    type: input.type,
    key,
    payloadJson,
    headers: validateHeaders(input.headers ?? {}, where),
    idempotencyKey,
    ...validateSchedule(input, where),
  });
}

function serializePayload(payload: unknown, where: string): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(payload);
  } catch (error) {
    // The serializer's own message can quote the payload (property names of a cycle, a toJSON's text).
    const kind = error instanceof Error ? error.name : typeof error;
    fail('OUTBOXER_PAYLOAD_NOT_JSON', `${where}: payload cannot be serialized to JSON (${kind}: a cycle, a BigInt or a throwing toJSON); pass plain data`);
  }
  if (json === undefined) {
    fail('OUTBOXER_PAYLOAD_NOT_JSON', `${where}: payload is ${typeof payload}, which has no JSON form; pass plain data (null is allowed)`);
  }
  if (UNSTORABLE_ESCAPE.test(json)) {
    fail('OUTBOXER_PAYLOAD_NOT_JSON', `${where}: payload holds a NUL character or a lone UTF-16 surrogate, which JSON columns cannot store`);
  }
  return json;
}

function validateHeaders(headers: Readonly<Record<string, string>>, where: string): Readonly<Record<string, string>> {
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
    fail('OUTBOXER_INVALID_HEADER', `${where}: headers must be an object of string values`);
  }
  const entries = Object.entries(headers);
  if (entries.length > MAX_HEADERS) fail('OUTBOXER_INVALID_HEADER', `${where}: at most ${MAX_HEADERS} headers are allowed`);
  const result: Record<string, string> = {};
  for (const [name, value] of entries) {
    if (!HEADER_NAME.test(name) || Buffer.byteLength(name) > MAX_HEADER_NAME_BYTES) {
      fail('OUTBOXER_INVALID_HEADER', `${where}: header name ${JSON.stringify(name.slice(0, 60))} must match ${HEADER_NAME.source}`);
    }
    if (typeof value !== 'string') {
      fail('OUTBOXER_INVALID_HEADER', `${where}: header "${name}" must be a string; got ${typeof value}`);
    }
    if (/[\r\n\0]/.test(value) || Buffer.byteLength(value) > MAX_HEADER_VALUE_BYTES) {
      fail('OUTBOXER_INVALID_HEADER', `${where}: header "${name}" must be at most ${MAX_HEADER_VALUE_BYTES} bytes with no CR, LF or NUL`);
    }
    if (name === 'traceparent' && !TRACEPARENT.test(value)) {
      fail('OUTBOXER_INVALID_HEADER', `${where}: header "traceparent" is not a W3C trace context (00-<32 hex>-<16 hex>-<2 hex>)`);
    }
    result[name] = value;
  }
  return Object.freeze(result);
}

function validateSchedule(input: OutboxMessageInput, where: string): { availableAt: Date | null; delayMs: number } {
  if (input.availableAt !== undefined && input.delayMs !== undefined) {
    fail('OUTBOXER_INVALID_SCHEDULE', `${where}: give availableAt or delayMs, not both`);
  }
  if (input.availableAt !== undefined) {
    if (!(input.availableAt instanceof Date) || Number.isNaN(input.availableAt.getTime())) {
      fail('OUTBOXER_INVALID_SCHEDULE', `${where}: availableAt must be a valid Date`);
    }
    return { availableAt: input.availableAt, delayMs: 0 };
  }
  const delayMs = input.delayMs ?? 0;
  if (!Number.isSafeInteger(delayMs) || delayMs < 0) {
    fail('OUTBOXER_INVALID_SCHEDULE', `${where}: delayMs must be a whole number of milliseconds >= 0`);
  }
  return { availableAt: null, delayMs };
}

function fail(code: ConstructorParameters<typeof MessageValidationError>[0], message: string): never {
  throw new MessageValidationError(code, message);
}
