import { describe, expect, it } from 'vitest';
import { MessageValidationError, type OutboxerErrorCode } from '../../src/core/errors.js';
import type { OutboxMessageInput } from '../../src/core/message.js';
import { validateMessage } from '../../src/core/validate-message.js';

const limits = { maxPayloadBytes: 1024 };
const ID = '018f3c1e-7b2a-7cde-8f01-23456789abcd';
const SECRET = 'canary-7f3a9c1e-secret-payload';
const base: OutboxMessageInput = { id: ID, topic: 'orders.created', type: 'order.created', payload: { secret: SECRET } };

/** Runs validateMessage and returns the error it throws (failing the test if it does not throw). */
function rejection(input: Partial<Record<keyof OutboxMessageInput, unknown>>, max = limits.maxPayloadBytes): MessageValidationError {
  try {
    validateMessage({ ...base, ...input } as OutboxMessageInput, { maxPayloadBytes: max });
  } catch (error) {
    expect(error).toBeInstanceOf(MessageValidationError);
    return error as MessageValidationError;
  }
  throw new Error(`expected a MessageValidationError for ${Object.keys(input).join(', ')}`);
}

function expectCode(input: Partial<Record<keyof OutboxMessageInput, unknown>>, code: OutboxerErrorCode, max?: number): MessageValidationError {
  const error = rejection(input, max);
  expect(error.code).toBe(code);
  expect(error.message).toContain(ID);
  expect(error.message).not.toContain(SECRET);
  return error;
}

describe('validateMessage: topic', () => {
  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['not a string', 42],
  ])('requires a topic (%s)', (_label, topic) => {
    expectCode({ topic }, 'OUTBOXER_TOPIC_REQUIRED');
  });

  it.each(['orders created', ' orders', 'orders\t', 'orders.*', 'orders.>', '>', '*', 'orders\n', '.orders', 'örders'])(
    'rejects the invalid topic %j',
    (topic) => {
      expectCode({ topic }, 'OUTBOXER_INVALID_TOPIC');
    },
  );

  it('accepts a topic of 255 bytes and rejects one of 256', () => {
    expect(validateMessage({ ...base, topic: 'a'.repeat(255) }, limits).topic).toHaveLength(255);
    expectCode({ topic: 'a'.repeat(256) }, 'OUTBOXER_INVALID_TOPIC');
  });

  it.each(['orders', 'orders.created', 'a_b-c:d/e', '0rders.v2'])('accepts the topic %j', (topic) => {
    expect(validateMessage({ ...base, topic }, limits).topic).toBe(topic);
  });
});

describe('validateMessage: type and key', () => {
  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['not a string', 7],
    ['over 255 bytes', 'é'.repeat(128)],
  ])('requires a type (%s)', (_label, type) => {
    expectCode({ type }, 'OUTBOXER_TYPE_REQUIRED');
  });

  it('rejects an empty key, a key over 512 bytes (counted in UTF-8) and a non-string key', () => {
    expectCode({ key: '' }, 'OUTBOXER_INVALID_KEY');
    expectCode({ key: 'é'.repeat(257) }, 'OUTBOXER_INVALID_KEY'); // 514 bytes, 257 characters
    expectCode({ key: 12 }, 'OUTBOXER_INVALID_KEY');
    expect(validateMessage({ ...base, key: 'k'.repeat(512) }, limits).key).toHaveLength(512);
  });

  it('turns an omitted key into null', () => {
    expect(validateMessage(base, limits).key).toBeNull();
    expect(validateMessage({ ...base, key: 'customer-1' }, limits).key).toBe('customer-1');
  });

  // PostgreSQL text cannot hold 0x00 ("invalid byte sequence for encoding UTF8"), and type/key travel as broker
  // headers where CR/LF is an injection: refuse them at enqueue like payload NULs and header values.
  it.each(['order\0created', 'order\r\ncreated'])('rejects a type holding NUL/CR/LF (%j)', (type) => {
    rejection({ type });
  });

  it.each(['customer\0-1', 'customer\r\n-1'])('rejects a key holding NUL/CR/LF (%j)', (key) => {
    rejection({ key });
  });
});

describe('validateMessage: payload', () => {
  const circular: Record<string, unknown> = { secret: SECRET };
  circular.self = circular;

  it.each([
    ['undefined', undefined],
    ['a function', () => SECRET],
    ['a BigInt', 10n ** 30n],
    ['a circular object', circular],
    ['a symbol', Symbol(SECRET)],
    ['an object whose toJSON returns undefined', { toJSON: () => undefined, secret: SECRET }],
  ])('rejects %s as not JSON', (_label, payload) => {
    expectCode({ payload }, 'OUTBOXER_PAYLOAD_NOT_JSON');
  });

  // The serializer's own error text describes the payload (a toJSON may put data in its error): it must not be
  // copied into the message. A cycle is named by its path instead (keys, as for NaN; never values).
  const throwingToJson = {
    toJSON: () => {
      throw new Error(`cannot serialize ${SECRET}`);
    },
  };
  it('does not echo the serializer error for a toJSON that throws with data', () => {
    expectCode({ payload: { order: throwingToJson } }, 'OUTBOXER_PAYLOAD_NOT_JSON');
  });

  it('rejects a NUL character in a value or a property name', () => {
    expectCode({ payload: { note: `a\0b ${SECRET}` } }, 'OUTBOXER_PAYLOAD_NOT_JSON');
    expectCode({ payload: { ['a\0b']: SECRET } }, 'OUTBOXER_PAYLOAD_NOT_JSON');
  });

  it('accepts the literal text \\u0000 (a backslash, not a NUL), which JSON columns store fine', () => {
    const payload = { path: 'C:\\u0000\\file' };
    const message = validateMessage({ ...base, payload }, limits);
    expect(JSON.parse(message.body as string)).toEqual(payload);
  });

  it('rejects a lone UTF-16 surrogate, which PostgreSQL jsonb refuses', () => {
    rejection({ payload: { text: 'x\uD800y' } });
  });

  it('accepts null and keeps the exact JSON text', () => {
    expect(validateMessage({ ...base, payload: null }, limits).body).toBe('null');
    expect(validateMessage({ ...base, payload: { a: [1, 'b'] } }, limits).body).toBe('{"a":[1,"b"]}');
  });

  it('measures the limit in UTF-8 bytes: exactly at the limit is accepted, one byte over is refused', () => {
    // JSON '"ééé…"': 2 quote bytes + 2 bytes per é.
    const atLimit = `"${'é'.repeat(511)}"`; // 1024 bytes, 513 characters
    expect(Buffer.byteLength(atLimit)).toBe(1024);
    expect(validateMessage({ ...base, payload: 'é'.repeat(511) }, limits).body).toBe(atLimit);
    const error = expectCode({ payload: `${'é'.repeat(511)}a` }, 'OUTBOXER_PAYLOAD_TOO_LARGE');
    expect(error.message).toContain('1025');
    expect(error.message).toContain('1024');
  });

  it('refuses a large payload without echoing it', () => {
    expectCode({ payload: { secret: SECRET, filler: 'x'.repeat(2000) } }, 'OUTBOXER_PAYLOAD_TOO_LARGE');
  });
});

describe('validateMessage: headers', () => {
  const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

  it('accepts valid headers and a W3C traceparent, and freezes them', () => {
    const message = validateMessage({ ...base, headers: { traceparent, 'correlation-id': 'abc', tenant: 't1' } }, limits);
    expect(message.headers).toEqual({ traceparent, 'correlation-id': 'abc', tenant: 't1' });
    expect(Object.isFrozen(message.headers)).toBe(true);
  });

  it.each(['', '-leading', '_leading', 'with space', 'colon:name', 'new\nline', 'x'.repeat(129), '__proto__'])('rejects the header name %j', (name) => {
    expectCode({ headers: { [name]: 'v' } }, 'OUTBOXER_INVALID_HEADER');
  });

  it.each([
    ['a number', 1],
    ['null', null],
    ['an object', { secret: SECRET }],
    ['CR/LF injection', 'v\r\nX-Injected: 1'],
    ['a bare LF', 'v\nX'],
    ['a NUL', 'v\0'],
    ['over 4096 bytes', 'é'.repeat(2049)],
  ])('rejects a header value that is %s', (_label, value) => {
    expectCode({ headers: { 'x-h': value } }, 'OUTBOXER_INVALID_HEADER');
  });

  it('rejects headers that are not a plain object', () => {
    expectCode({ headers: ['a'] }, 'OUTBOXER_INVALID_HEADER');
    expectCode({ headers: 'a=b' }, 'OUTBOXER_INVALID_HEADER');
  });

  it('allows 64 headers and refuses 65', () => {
    const headers = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`h${i}`, 'v']));
    expect(Object.keys(validateMessage({ ...base, headers: headers(64) }, limits).headers)).toHaveLength(64);
    expectCode({ headers: headers(65) }, 'OUTBOXER_INVALID_HEADER');
  });

  it.each([
    ['garbage', 'not-a-trace'],
    ['uppercase hex', '00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01'],
    ['a short trace id', '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01'],
    ['a trailing field', `${traceparent}-ff`],
    // W3C Trace Context §3.2.2: an all-zero trace-id or parent-id is invalid, and version ff is forbidden.
    ['an all-zero trace id', '00-00000000000000000000000000000000-00f067aa0ba902b7-01'],
    ['an all-zero parent id', '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01'],
    ['version ff', 'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'],
  ])('rejects a traceparent with %s', (_label, value) => {
    expectCode({ headers: { traceparent: value } }, 'OUTBOXER_INVALID_HEADER');
  });
});

describe('validateMessage: schedule', () => {
  it('refuses availableAt and delayMs together, and an invalid Date', () => {
    expectCode({ availableAt: new Date(), delayMs: 10 }, 'OUTBOXER_INVALID_SCHEDULE');
    expectCode({ availableAt: new Date('not a date') }, 'OUTBOXER_INVALID_SCHEDULE');
    expectCode({ availableAt: '2030-01-01T00:00:00Z' }, 'OUTBOXER_INVALID_SCHEDULE');
  });

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '10'])('refuses delayMs %j', (delayMs) => {
    expectCode({ delayMs }, 'OUTBOXER_INVALID_SCHEDULE');
  });

  it('refuses a delayMs beyond the safe integers (it overflows int8 at insert)', () => {
    expectCode({ delayMs: 1e20 }, 'OUTBOXER_INVALID_SCHEDULE');
  });

  it('passes a valid schedule through', () => {
    const at = new Date('2030-01-01T00:00:00Z');
    expect(validateMessage({ ...base, availableAt: at }, limits)).toMatchObject({ availableAt: at, delayMs: 0 });
    expect(validateMessage({ ...base, delayMs: 5000 }, limits)).toMatchObject({ availableAt: null, delayMs: 5000 });
    expect(validateMessage(base, limits)).toMatchObject({ availableAt: null, delayMs: 0 });
  });
});

describe('validateMessage: ids and result', () => {
  it.each(['not-a-uuid', '', '018f3c1e7b2a7cde8f0123456789abcd', `${ID} `, `{${ID}}`])('refuses the custom id %j', (id) => {
    const error = rejection({ id });
    expect(error.code).toBe('OUTBOXER_INVALID_ID');
    expect(error.message).not.toContain(SECRET);
  });

  it('keeps a custom UUID', () => {
    expect(validateMessage(base, limits).id).toBe(ID);
  });

  // The uuid column gives ids back in lowercase (claim selects id::text), so an uppercase id handed back by
  // enqueue would differ from the id the broker and consumers see.
  it('returns a custom uppercase UUID in the lowercase form the store and the broker will carry', () => {
    expect(validateMessage({ ...base, id: ID.toUpperCase() }, limits).id).toBe(ID);
  });

  it('generates UUIDv7 ids that increase', () => {
    const { id: _omit, ...withoutId } = base;
    const ids = Array.from({ length: 2000 }, () => validateMessage(withoutId, limits).id);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    for (let i = 1; i < ids.length; i++) expect((ids[i] as string) > (ids[i - 1] as string)).toBe(true);
  });

  it('returns a frozen message with every field', () => {
    const message = validateMessage({ ...base, key: 'k' }, limits);
    expect(Object.isFrozen(message)).toBe(true);
    expect(message).toEqual({
      id: ID,
      topic: 'orders.created',
      type: 'order.created',
      key: 'k',
      body: JSON.stringify({ secret: SECRET }),
      contentType: 'application/json',
      headers: {},
      availableAt: null,
      delayMs: 0,
      idempotencyKey: null,
      destination: null,
    });
  });
});

describe('validateMessage: idempotency key', () => {
  const input = { topic: 'orders.paid', type: 'order.paid', payload: {} };
  it('keeps a valid key', () => {
    expect(validateMessage({ ...input, idempotencyKey: 'order-7:paid' }, { maxPayloadBytes: 1024 }).idempotencyKey).toBe('order-7:paid');
  });
  it.each([
    ['empty', ''],
    ['too long', 'k'.repeat(513)],
    ['with a newline', 'a\nb'],
    ['with NUL', 'a\u0000b'],
  ])('refuses a key that is %s', (_label, key) => {
    expect(() => validateMessage({ ...input, idempotencyKey: key }, { maxPayloadBytes: 1024 })).toThrow(
      expect.objectContaining({ code: 'OUTBOXER_INVALID_KEY' }),
    );
  });
});

describe('validateMessage: what JSON cannot say is refused, not rewritten', () => {
  it.each([
    ['NaN at the top', Number.NaN, 'payload is NaN'],
    ['Infinity in an object', { total: Number.POSITIVE_INFINITY }, 'payload.total is Infinity'],
    ['-Infinity deep in an array', { lines: [{ price: 1 }, { price: Number.NEGATIVE_INFINITY }] }, 'payload.lines[1].price is -Infinity'],
    ['NaN under an odd key', { 'unit price': Number.NaN }, 'payload["unit price"] is NaN'],
  ])('refuses %s, naming the path and the fix', (_label, payload, path) => {
    const error = expectCode({ payload }, 'OUTBOXER_PAYLOAD_NOT_JSON');
    expect(error.message).toContain(path);
    expect(error.message).toContain('JSON.stringify would store null');
    expect(error.message).toContain('send a finite number, null or a string');
  });

  it('still accepts finite numbers, -0 and values a toJSON turns into JSON (dates)', () => {
    const at = new Date('2026-01-02T03:04:05.678Z');
    expect(validateMessage({ ...base, payload: { n: -0, big: 1e300, at } }, limits).body).toBe('{"n":0,"big":1e+300,"at":"2026-01-02T03:04:05.678Z"}');
  });
});

describe('validateMessage: unknown fields', () => {
  it.each([
    ['topik', 'did you mean "topic"?'],
    ['payloads', 'did you mean "payload"?'],
    ['header', 'did you mean "headers"?'],
    ['delay', 'did you mean "delayMs"?'],
    ['content_type', 'did you mean "contentType"?'],
  ])('refuses %j and suggests the field meant', (field, hint) => {
    const error = expectCode({ [field]: 'x' } as Partial<Record<keyof OutboxMessageInput, unknown>>, 'OUTBOXER_UNKNOWN_FIELD');
    expect(error.message).toContain(`unknown field "${field}"`);
    expect(error.message).toContain(hint);
  });

  it('lists the known fields when nothing is close, and points custom metadata to headers', () => {
    const error = expectCode({ tenantOfTheOrder: 'acme' } as Partial<Record<keyof OutboxMessageInput, unknown>>, 'OUTBOXER_UNKNOWN_FIELD');
    expect(error.message).toContain('known fields: topic, type, payload, contentType, key, headers, id, availableAt, delayMs, idempotencyKey');
    expect(error.message).toContain('put custom metadata in headers');
  });
});

describe('validateMessage: binary bodies and content types', () => {
  const bytes = Uint8Array.from([0x0a, 0x03, 0x66, 0x6f, 0x6f, 0x00, 0xff]);

  it('keeps a Uint8Array as a binary body (a copy), octet-stream unless a content type is named', () => {
    const message = validateMessage({ ...base, payload: bytes }, limits);
    expect(message.body).toBeInstanceOf(Uint8Array);
    expect([...(message.body as Uint8Array)]).toEqual([...bytes]);
    expect(message.body).not.toBe(bytes);
    expect(message.contentType).toBe('application/octet-stream');
    const protobuf = validateMessage({ ...base, payload: Buffer.from(bytes), contentType: 'application/x-protobuf; messageType="acme.Order"' }, limits);
    expect(protobuf.contentType).toBe('application/x-protobuf; messageType="acme.Order"');
  });

  it('counts a binary body by its length against maxPayloadBytes', () => {
    expect(validateMessage({ ...base, payload: new Uint8Array(1024) }, limits).body).toHaveLength(1024);
    const error = expectCode({ payload: new Uint8Array(1025) }, 'OUTBOXER_PAYLOAD_TOO_LARGE');
    expect(error.message).toContain('1025 bytes');
  });

  it('accepts JSON media types for a JSON payload and refuses others with the way out', () => {
    expect(validateMessage({ ...base, contentType: 'application/cloudevents+json' }, limits).contentType).toBe('application/cloudevents+json');
    expect(validateMessage({ ...base, contentType: 'application/json; charset=utf-8' }, limits).contentType).toBe('application/json; charset=utf-8');
    const error = expectCode({ contentType: 'text/plain' }, 'OUTBOXER_INVALID_CONTENT_TYPE');
    expect(error.message).toContain('pass the body as a Uint8Array');
  });

  it.each([
    ['empty', ''],
    ['no subtype', 'application'],
    ['a space inside', 'application/x protobuf'],
    ['a line break', 'application/json\n'],
    ['not a string', 7],
    ['too long', `application/${'x'.repeat(300)}`],
  ])('refuses a content type that is %s', (_label, contentType) => {
    expectCode({ payload: bytes, contentType }, 'OUTBOXER_INVALID_CONTENT_TYPE');
  });

  it('refuses other binary shapes with the form to use', () => {
    for (const payload of [new ArrayBuffer(4), new Float32Array(2), new DataView(new ArrayBuffer(2))]) {
      const error = expectCode({ payload }, 'OUTBOXER_PAYLOAD_NOT_JSON');
      expect(error.message).toContain('pass a binary body as a Uint8Array or Buffer');
    }
  });
});
