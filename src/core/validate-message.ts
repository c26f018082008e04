import { MessageValidationError } from './errors.js';
import { isUuid, newMessageId } from './ids.js';
import { bodyByteLength, type NewOutboxMessage, type OutboxMessageInput } from './message.js';
import { toBody } from './message-body.js';
import { DEFAULT_DESTINATION, destinationFault, headersFault, keyFault, MAX_KEY_BYTES, MessageRules, topicFault, typeFault } from './message-rules.js';

export interface MessageLimits {
  /** Largest body accepted at enqueue, in the bytes that will be published (UTF-8 of the JSON text, or the binary's length). */
  readonly maxPayloadBytes: number;
}

const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

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
    fail('OUTBOXER_TOPIC_REQUIRED', `${where}: topic is required (e.g. "orders.created"); ${MessageRules.topic}`);
  }
  const topic = topicFault(input.topic);
  if (topic !== undefined) fail('OUTBOXER_INVALID_TOPIC', `${where}: ${topic}`);
  if (typeof input.type !== 'string') fail('OUTBOXER_TYPE_REQUIRED', `${where}: type is required (e.g. "order.created"); ${MessageRules.type}`);
  const type = typeFault(input.type);
  if (type !== undefined) fail('OUTBOXER_TYPE_REQUIRED', `${where}: ${type}`);
  const key = input.key ?? null;
  if (key !== null && typeof key !== 'string') fail('OUTBOXER_INVALID_KEY', `${where}: key must be a string; ${MessageRules.key}`);
  const keyProblem = keyFault(key);
  if (keyProblem !== undefined) fail('OUTBOXER_INVALID_KEY', `${where}: ${keyProblem}`);

  const idempotencyKey = input.idempotencyKey ?? null;
  if (
    idempotencyKey !== null &&
    (typeof idempotencyKey !== 'string' || idempotencyKey === '' || Buffer.byteLength(idempotencyKey) > MAX_KEY_BYTES || CONTROL_CHARACTER.test(idempotencyKey))
  ) {
    fail(
      'OUTBOXER_INVALID_KEY',
      `${where}: idempotencyKey must be a non-empty string of at most ${MAX_KEY_BYTES} bytes without control characters, or omitted`,
    );
  }

  const destination = input.destination ?? null;
  if (destination !== null && typeof destination !== 'string')
    fail('OUTBOXER_INVALID_DESTINATION', `${where}: destination must be a string; ${MessageRules.destination}`);
  const destinationProblem = destination === null ? undefined : destinationFault(destination);
  if (destinationProblem !== undefined) fail('OUTBOXER_INVALID_DESTINATION', `${where}: ${destinationProblem}`);

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
    destination: destination === DEFAULT_DESTINATION ? null : destination,
    ...validateSchedule(input, where),
  });
}

const KNOWN_FIELDS: readonly (keyof OutboxMessageInput)[] = [
  'topic',
  'type',
  'payload',
  'contentType',
  'key',
  'headers',
  'id',
  'availableAt',
  'delayMs',
  'idempotencyKey',
  'destination',
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

function validateHeaders(headers: unknown, where: string): Readonly<Record<string, string>> {
  const problem = headersFault(headers);
  if (problem !== undefined) fail('OUTBOXER_INVALID_HEADER', `${where}: ${problem}`);
  return Object.freeze({ ...(headers as Record<string, string>) });
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
