import { describe, expect, it } from 'vitest';
import { MessageValidationError } from '../../src/core/errors.js';
import { validateMessage } from '../../src/core/validate-message.js';

const ID = '018f3c1e-7b2a-7cde-8f01-23456789abcd';
const SECRET = 'canary-4d1e-secret-value';
const limits = { maxPayloadBytes: 64 * 1024 };

/** The body enqueue would store for `payload`. */
const bodyOf = (payload: unknown) => validateMessage({ id: ID, topic: 't', type: 'x', payload }, limits).body;

/** The refusal of `payload`: a MessageValidationError OUTBOXER_PAYLOAD_NOT_JSON naming the message, never a value. */
function refusal(payload: unknown): string {
  try {
    bodyOf(payload);
  } catch (error) {
    expect(error).toBeInstanceOf(MessageValidationError);
    expect((error as MessageValidationError).code).toBe('OUTBOXER_PAYLOAD_NOT_JSON');
    const { message } = error as Error;
    expect(message).toMatch(new RegExp(`^message ${ID}: `));
    expect(message).not.toContain(SECRET);
    return message;
  }
  throw new Error('expected the payload to be refused');
}

class Order {
  readonly lines: string[] = [SECRET];
  constructor(readonly id: number) {}
  total(): number {
    return this.id;
  }
}

describe('JSON payloads: what JSON.stringify would change silently is refused, naming the path', () => {
  it.each([
    [
      'a Map (stored as {})',
      { m: new Map([['a', SECRET]]), s: new Set([1]) },
      'payload.m is a Map, which JSON.stringify would store as {}; convert it first (Object.fromEntries(map))',
    ],
    [
      'a Set (stored as {})',
      { order: { tags: new Set([SECRET]) } },
      'payload.order.tags is a Set, which JSON.stringify would store as {}; convert it first ([...set])',
    ],
    ['a WeakMap', { cache: new WeakMap() }, 'payload.cache is a WeakMap'],
    ['a WeakSet', { seen: new WeakSet() }, 'payload.seen is a WeakSet'],
    ['a Map at the top', new Map([['a', 1]]), 'payload is a Map'],
    ['a typed array inside the JSON (stored as {"0":…})', { data: new Uint8Array([1, 2]) }, 'payload.data is binary data'],
    ['a Float64Array in an array', { points: [new Float64Array(2)] }, 'payload.points[0] is binary data'],
    ['an ArrayBuffer inside the JSON', { raw: new ArrayBuffer(4) }, 'payload.raw is binary data'],
    ['a DataView inside the JSON', { raw: new DataView(new ArrayBuffer(2)) }, 'payload.raw is binary data'],
    [
      'a Buffer inside the JSON (stored as {"type":"Buffer","data":[…]})',
      { file: Buffer.from(SECRET) },
      'payload.file is binary data, which JSON.stringify would store as an object of numbers; encode it into a string (base64)',
    ],
    [
      'an Error (message and stack are not enumerable)',
      { cause: new Error(SECRET) },
      'payload.cause is an Error, whose message and stack JSON.stringify leaves out',
    ],
    ['a RegExp', { pattern: /secret/ }, 'payload.pattern is a RegExp'],
    ['a Promise', { later: Promise.resolve(1) }, 'payload.later is a Promise, which JSON.stringify would store as {}; await it first'],
    ['an invalid Date (stored as null)', { at: new Date('not a date') }, 'payload.at is an invalid Date, which JSON.stringify would store as null'],
    ['a function property (left out)', { total: 1, compute: () => SECRET }, 'payload.compute is a function, which JSON.stringify would leave out'],
    ['a symbol value (left out)', { tag: Symbol(SECRET) }, 'payload.tag is a symbol, which JSON.stringify would leave out'],
    ['a function in an array (stored as null)', { steps: [1, () => 2] }, 'payload.steps[1] is a function, which JSON.stringify would store as null'],
    [
      'undefined in an array (stored as null)',
      { values: [1, undefined, 3] },
      'payload.values[1] is undefined (or a hole) in an array, which JSON.stringify would store as null; send null',
    ],
    // eslint-disable-next-line no-sparse-arrays
    ['a hole in an array (stored as null)', { values: [1, , 3] }, 'payload.values[1] is undefined (or a hole) in an array'],
    ['a boxed BigInt', { n: Object(1n) }, 'payload.n is a BigInt'],
  ])('refuses %s', (_label, payload, expected) => {
    expect(refusal(payload)).toContain(expected);
  });

  it('names the path of a BigInt, as for NaN', () => {
    expect(refusal({ amount: { value: 10n ** 30n } })).toBe(
      `message ${ID}: payload.amount.value is a BigInt, which JSON cannot represent (JSON.stringify throws); send it as a string (String(n)) or a number`,
    );
    expect(refusal([{ id: 1n }])).toContain('payload[0].id is a BigInt');
  });

  it('names both ends of a cycle', () => {
    const order: Record<string, unknown> = { secret: SECRET, lines: [{ sku: 'a' }] };
    ((order.lines as Record<string, unknown>[])[0] as Record<string, unknown>).order = order;
    expect(refusal({ order })).toBe(
      `message ${ID}: payload.order.lines[0].order refers back to payload.order (a cycle), which JSON cannot represent; send a copy without the back reference`,
    );
    const list: unknown[] = [SECRET];
    list.push({ list });
    expect(refusal(list)).toContain('payload[1].list refers back to payload (a cycle)');
  });
});

describe('JSON payloads: what JSON.stringify writes faithfully is kept', () => {
  it('leaves out an object property set to undefined, as an absent field', () => {
    expect(bodyOf({ a: 1, b: undefined })).toBe('{"a":1}');
  });

  it('writes a value through its toJSON (a Date as its ISO text) and a class instance as its own fields', () => {
    const at = new Date('2026-01-02T03:04:05.678Z');
    expect(bodyOf({ at, order: new Order(7) })).toBe(`{"at":"2026-01-02T03:04:05.678Z","order":{"id":7,"lines":["${SECRET}"]}}`);
    expect(bodyOf({ money: { toJSON: () => '9.90' } })).toBe('{"money":"9.90"}');
  });

  it('writes an object met twice (not a cycle) twice, and objects without a prototype', () => {
    const shared = { sku: 'a' };
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { k: 1 });
    expect(bodyOf({ first: shared, second: [shared], bare })).toBe('{"first":{"sku":"a"},"second":[{"sku":"a"}],"bare":{"k":1}}');
  });

  it('writes boxed numbers, strings and booleans as their values', () => {
    expect(bodyOf({ n: Object(1), s: Object('a'), b: Object(true) })).toBe('{"n":1,"s":"a","b":true}');
  });
});
