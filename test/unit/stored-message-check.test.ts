import { describe, expect, it } from 'vitest';
import { type MessageValidationError, PublishError } from '../../src/core/errors.js';
import type { OutboxMessage, OutboxMessageInput } from '../../src/core/message.js';
import { failureAction } from '../../src/core/publish-failure.js';
import { checkStoredMessage } from '../../src/core/stored-message-check.js';
import { validateMessage } from '../../src/core/validate-message.js';

const ID = '018f3c1e-7b2a-7cde-8f01-23456789abcd';
const stored = (fields: Partial<OutboxMessage>): OutboxMessage => ({
  id: ID,
  seq: '1',
  topic: 'orders.created',
  type: 'order.created',
  key: 'order-7',
  body: '{}',
  contentType: 'application/json',
  headers: { tenant: 'acme' },
  createdAt: new Date(),
  attempts: 1,
  lastError: null,
  ...fields,
});

/** What the library says at enqueue of the same fields. */
function enqueueRefusal(fields: Partial<OutboxMessageInput>): MessageValidationError {
  try {
    validateMessage({ id: ID, topic: 'orders.created', type: 'order.created', payload: {}, ...fields }, { maxPayloadBytes: 1024 });
  } catch (error) {
    return error as MessageValidationError;
  }
  throw new Error('expected the library to refuse it');
}

describe('checkStoredMessage: a row stored before the table checked it is parked dead, in the words of enqueue', () => {
  it.each([
    ['a wildcard topic', { topic: 'orders.#' }, 'OUTBOXER_INVALID_TOPIC'],
    ['a topic with a space', { topic: 'orders t' }, 'OUTBOXER_INVALID_TOPIC'],
    ['a type with a line break', { type: 'order\ncreated' }, 'OUTBOXER_TYPE_REQUIRED'],
    ['a key with a control character', { key: 'k\u0007' }, 'OUTBOXER_INVALID_KEY'],
    ['a header name with a space', { headers: { 'x tenant': 'acme' } }, 'OUTBOXER_INVALID_HEADER'],
    ['a header value with CR/LF', { headers: { tenant: 'a\r\nX: 1' } }, 'OUTBOXER_INVALID_HEADER'],
    ['a header value of 5000 bytes', { headers: { tenant: 'x'.repeat(5000) } }, 'OUTBOXER_INVALID_HEADER'],
    ['a header name of 200 characters', { headers: { ['n'.repeat(200)]: 'v' } }, 'OUTBOXER_INVALID_HEADER'],
    ['a malformed traceparent', { headers: { traceparent: '00-xyz-01' } }, 'OUTBOXER_INVALID_HEADER'],
  ] as const)('refuses %s', (_label, fields, code) => {
    let caught: unknown;
    try {
      checkStoredMessage(stored(fields));
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(PublishError);
    const error = caught as PublishError;
    expect(error.code).toBe(code);
    expect(error.permanent).toBe(true);
    expect(failureAction(error)).toBe('dead');
    const atEnqueue = enqueueRefusal(fields);
    expect(atEnqueue.code).toBe(code);
    expect(error.message).toBe(`${atEnqueue.message} (stored before the table checked it)`);
  });

  it('lets a valid message through, whatever its (valid) headers', () => {
    expect(() =>
      checkStoredMessage(stored({ key: null, headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', 'x.y_z-1': '' } })),
    ).not.toThrow();
  });
});
