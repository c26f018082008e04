import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import { checkTopicPause, MAX_PAUSE_REASON_BYTES, MAX_PAUSED_TOPIC_BYTES } from '../../src/core/topic-pause-input.js';

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
