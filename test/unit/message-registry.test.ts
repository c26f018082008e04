import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigurationError, MessageValidationError } from '../../src/core/errors.js';
import { UnknownMessageTypeError } from '../../src/consumer/errors.js';
import { MessageRegistry, validateOutgoing } from '../../src/consumer/message-registry.js';
import { parsePayloadJson } from '../../src/consumer/received-message.js';
import type { StandardSchemaV1 } from '../../src/consumer/standard-schema.js';

const orderCreated = z.object({ orderId: z.number().int(), total: z.string() });

/** A Standard Schema written by hand: the registry must not depend on zod. */
const evenNumber: StandardSchemaV1<number, number> = {
  '~standard': {
    version: 1,
    vendor: 'hand-made',
    validate: (value) => (typeof value === 'number' && value % 2 === 0 ? { value } : { issues: [{ message: 'expected an even number' }] }),
  },
};

const asyncSchema: StandardSchemaV1<string, string> = {
  '~standard': {
    version: 1,
    vendor: 'async',
    validate: async (value) => (typeof value === 'string' ? { value: value.toUpperCase() } : { issues: [{ message: 'expected a string' }] }),
  },
};

describe('MessageRegistry', () => {
  it('returns the schema output for a valid payload (zod strips unknown keys)', () => {
    const registry = new MessageRegistry().register('order.created', orderCreated);
    expect(registry.parse('order.created', { orderId: 7, total: '9.90', extra: 'dropped' })).toEqual({ orderId: 7, total: '9.90' });
    expect(validateOutgoing(registry, 'order.created', { orderId: 1, total: '1' })).toEqual({ orderId: 1, total: '1' });
  });

  // Valid JSON that the schema refuses is no encoding fault: its own code, so that a dead reason says which it is.
  it('refuses an invalid payload with OUTBOXER_SCHEMA_MISMATCH, naming the message, the path and the fix but never the value', () => {
    const registry = new MessageRegistry().register('order.created', orderCreated);
    let caught: unknown;
    try {
      registry.parse('order.created', { orderId: 'secret-value-123', total: '1' }, 'message 018f3c1e-7b2a-7cde-8f01-23456789abcd');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(MessageValidationError);
    expect((caught as MessageValidationError).code).toBe('OUTBOXER_SCHEMA_MISMATCH');
    expect((caught as Error).message).toMatch(
      /^message 018f3c1e-7b2a-7cde-8f01-23456789abcd: payload of type "order.created" does not match its schema \(orderId: .*\); fix the payload where it is produced, or the schema registered for "order.created"$/,
    );
    expect((caught as Error).message).not.toContain('secret-value-123');
  });

  it('never resolves an unknown type: prototype names included, it is an UnknownMessageTypeError', () => {
    const registry = new MessageRegistry().register('order.created', orderCreated);
    for (const type of ['order.deleted', '__proto__', 'constructor', 'toString', 'hasOwnProperty', '../../etc/passwd']) {
      let caught: unknown;
      try {
        registry.parse(type, {});
      } catch (error) {
        caught = error;
      }
      expect(caught, type).toBeInstanceOf(UnknownMessageTypeError);
      expect(caught, type).toBeInstanceOf(MessageValidationError);
      expect((caught as { code: string }).code).toBe('OUTBOXER_UNKNOWN_TYPE');
      expect(registry.has(type)).toBe(false);
    }
  });

  it('works with any Standard Schema, sync or async', async () => {
    const registry = new MessageRegistry().register('even', evenNumber).register('shout', asyncSchema);
    expect(registry.parse('even', 4)).toBe(4);
    expect(() => registry.parse('even', 3)).toThrow(/expected an even number/);
    await expect(registry.parseAsync('shout', 'hi')).resolves.toBe('HI');
    await expect(registry.parseAsync('shout', 1)).rejects.toBeInstanceOf(MessageValidationError);
    expect(() => registry.parse('shout', 'hi')).toThrow(ConfigurationError);
  });

  it('refuses bad registrations: duplicates, non-schemas, bad type names, non-function handlers', () => {
    const registry = new MessageRegistry().register('a', orderCreated);
    expect(() => registry.register('a', orderCreated)).toThrow(/already registered/);
    expect(() => registry.register('b', {} as StandardSchemaV1)).toThrow(ConfigurationError);
    expect(() => registry.register('', orderCreated)).toThrow(ConfigurationError);
    expect(() => registry.register('x\ny', orderCreated)).toThrow(ConfigurationError);
    expect(() => registry.register('c', orderCreated, 'nope' as never)).toThrow(ConfigurationError);
    expect(registry.types).toEqual(['a']);
  });

  it('keeps the handler with its type', () => {
    const handler = async () => undefined;
    const registry = new MessageRegistry<string>().register('a', orderCreated, handler).register('b', evenNumber);
    expect(registry.handlerFor('a')).toBe(handler);
    expect(registry.handlerFor('b')).toBeUndefined();
    expect(() => registry.handlerFor('c')).toThrow(UnknownMessageTypeError);
  });
});

describe('parsePayloadJson', () => {
  it('parses JSON and refuses prototype-polluting keys at any depth without quoting the body', () => {
    expect(parsePayloadJson('{"a":[1,{"b":null}]}', 'm')).toEqual({ a: [1, { b: null }] });
    for (const body of ['{"__proto__":{"admin":true}}', '{"a":{"constructor":{"prototype":{}}}}', '[{"prototype":1}]']) {
      expect(() => parsePayloadJson(body, 'm')).toThrow(/forbidden key/);
    }
    let caught: unknown;
    try {
      parsePayloadJson('{"password":"hunter2"', 'message x');
    } catch (error) {
      caught = error;
    }
    expect((caught as MessageValidationError).code).toBe('OUTBOXER_PAYLOAD_NOT_JSON');
    expect((caught as Error).message).not.toContain('hunter2');
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });
});
