import { MessageValidationError } from './errors.js';
import { isUuid, newMessageId } from './ids.js';
import { bodyByteLength, type NewOutboxMessage, type OutboxMessageInput } from './message.js';
import { toBody } from './message-body.js';

export interface MessageLimits {
  /** Largest body accepted at enqueue, in the bytes that will be published (UTF-8 of the JSON text, or the binary's length). */
  readonly maxPayloadBytes: number;
}

const TOPIC = /^[A-Za-z0-9_:\-/]+(\.[A-Za-z0-9_:\-/]+)*$/;
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;
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
  if (typeof input !== 'object' || input === null) fail('OUTBOXER_TOPIC_REQUIRED', 'a message must be an object with topic, type and payload');
  const id = input.id === undefined ? newMessageId() : String(input.id).toLowerCase();
  if (!isUuid(id)) fail('OUTBOXER_INVALID_ID', `message id must be a UUID; got ${JSON.stringify(id.slice(0, 60))}`);
  const where = `message ${id}`;
  refuseUnknownFields(input, where);

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

  const { body, contentType } = toBody(input.payload, input.contentType, where);
  const payloadBytes = bodyByteLength(body);
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
    body,
    contentType,
    headers: validateHeaders(input.headers ?? {}, where),
    idempotencyKey,
    ...validateSchedule(input, where),
  });
}

const KNOWN_FIELDS: readonly (keyof OutboxMessageInput)[] = [
  'topic', 'type', 'payload', 'contentType', 'key', 'headers', 'id', 'availableAt', 'delayMs', 'idempotencyKey',
];

/** A misspelt field (`topik`, `delay`) would otherwise be dropped without a word. */
function refuseUnknownFields(input: object, where: string): void {
  for (const field of Object.keys(input)) {
    if ((KNOWN_FIELDS as readonly string[]).includes(field)) continue;
    const near = KNOWN_FIELDS.find((known) => editDistance(known.toLowerCase(), field.toLowerCase()) <= 2);
    const hint = near === undefined ? `known fields: ${KNOWN_FIELDS.join(', ')}` : `did you mean "${near}"?`;
    fail('OUTBOXER_UNKNOWN_FIELD', `${where}: unknown field ${JSON.stringify(field.slice(0, 60))}; ${hint} (put custom metadata in headers)`);
  }
}

/** Levenshtein distance, for the "did you mean" hint (field names are short). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length] as number;
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
