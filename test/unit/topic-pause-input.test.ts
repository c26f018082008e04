import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import { checkDestinationPause, checkTopicPause, MAX_PAUSE_REASON_BYTES, MAX_PAUSED_TOPIC_BYTES } from '../../src/core/topic-pause-input.js';

function refusal(topic: unknown, reason?: unknown): ConfigurationError {
  try {
    checkTopicPause(topic, reason);
  } catch (error) {
    if (error instanceof ConfigurationError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('checkTopicPause', () => {
  it('takes any topic the outbox table takes, plain-SQL ones included, and an empty or bounded reason', () => {
    expect(checkTopicPause('orders.created', 'consumer migration')).toEqual({ topic: 'orders.created', reason: 'consumer migration' });
    expect(checkTopicPause('legacy topic with spaces/é', '')).toEqual({ topic: 'legacy topic with spaces/é', reason: '' });
    expect(checkTopicPause('x'.repeat(MAX_PAUSED_TOPIC_BYTES)).reason).toBe('');
    expect(checkTopicPause('t', 'r'.repeat(MAX_PAUSE_REASON_BYTES)).reason).toHaveLength(MAX_PAUSE_REASON_BYTES);
  });

  it.each([
    ['an empty topic', ''],
    ['a topic over 255 bytes', 'é'.repeat(128)],
    ['a line break', 'orders\ncreated'],
    ['an escape sequence', 'orders\u001b[2J'],
    ['a C1 control', 'orders\u0085'],
    ['a bidirectional override', 'orders\u202e'],
    ['a number', 7],
    ['null', null],
  ])('refuses %s as the topic, with OUTBOXER_INVALID_TOPIC naming the bounds', (_, topic) => {
    const error = refusal(topic);
    expect(error.code).toBe('OUTBOXER_INVALID_TOPIC');
    expect(error.options).toEqual(['topic']);
    expect(error.message).toContain('at most 255 bytes without control characters');
    expect(error.message).not.toMatch(/[\n\u001b\u0085\u202e]/);
  });

  it.each([
    ['over 500 bytes', 'r'.repeat(MAX_PAUSE_REASON_BYTES + 1)],
    ['with a line break (a forged log line)', 'ok\nlevel=error msg=forged'],
    ['not a string', { why: 'x' }],
  ])('refuses a reason %s, with OUTBOXER_INVALID_OPTION naming the topic', (_, reason) => {
    const error = refusal('orders', reason);
    expect(error.code).toBe('OUTBOXER_INVALID_OPTION');
    expect(error.options).toEqual(['reason']);
    expect(error.message).toContain('"orders"');
  });
});

describe('checkDestinationPause', () => {
  function destinationRefusal(destination: unknown, reason?: unknown): ConfigurationError {
    try {
      checkDestinationPause(destination, reason);
    } catch (error) {
      if (error instanceof ConfigurationError) return error;
      throw error;
    }
    throw new Error('expected a refusal');
  }

  it("takes a destination name as the outbox table takes it, `default` for the relay's own publisher, and a bounded reason", () => {
    expect(checkDestinationPause('partner', 'their maintenance')).toEqual({ destination: 'partner', reason: 'their maintenance' });
    expect(checkDestinationPause('default')).toEqual({ destination: 'default', reason: '' });
    expect(checkDestinationPause('a'.repeat(64), 'r'.repeat(MAX_PAUSE_REASON_BYTES)).destination).toHaveLength(64);
  });

  it.each([
    ['an empty name', ''],
    ['a name over 64 bytes', 'a'.repeat(65)],
    ['a dot', 'partner.eu'],
    ['a space', 'partner eu'],
    ['a leading dash', '-partner'],
    ['a line break', 'partner\n'],
    ['a pause key', '*@partner'],
    ['a number', 7],
    ['null', null],
  ])('refuses %s as the destination, with OUTBOXER_INVALID_DESTINATION stating the rule', (_, destination) => {
    const error = destinationRefusal(destination);
    expect(error.code).toBe('OUTBOXER_INVALID_DESTINATION');
    expect(error.options).toEqual(['destination']);
    expect(error.message).toContain('a paused destination must be');
    expect(error.message).not.toMatch(/[\n]/);
  });

  it.each([
    ['over 500 bytes', 'r'.repeat(MAX_PAUSE_REASON_BYTES + 1)],
    ['with a line break (a forged log line)', 'ok\nlevel=error msg=forged'],
    ['not a string', 3],
  ])('refuses a reason %s, with OUTBOXER_INVALID_OPTION naming the destination', (_, reason) => {
    const error = destinationRefusal('partner', reason);
    expect(error.code).toBe('OUTBOXER_INVALID_OPTION');
    expect(error.options).toEqual(['reason']);
    expect(error.message).toContain('"partner"');
  });
});
