import { describe, expect, it } from 'vitest';
import { ConfigurationError, describeError, isPermanentPublishError, MessageValidationError, OutboxerError, PublishError } from '../../src/core/errors.js';

describe('OutboxerError and its subclasses', () => {
  it('carry a stable code, their own name and the message', () => {
    const error = new MessageValidationError('OUTBOXER_INVALID_TOPIC', 'message x: bad topic');
    expect(error).toBeInstanceOf(OutboxerError);
    expect(error).toBeInstanceOf(Error);
    expect(error.code).toBe('OUTBOXER_INVALID_TOPIC');
    expect(error.name).toBe('MessageValidationError');
    expect(error.message).toBe('message x: bad topic');
    expect(new ConfigurationError('OUTBOXER_INVALID_OPTION', 'x').name).toBe('ConfigurationError');
    expect(new OutboxerError('OUTBOXER_CLOSED', 'x').name).toBe('OutboxerError');
    expect(new PublishError('OUTBOXER_UNROUTABLE', 'x').name).toBe('PublishError');
  });

  it('keep a cause when given one and have none otherwise', () => {
    const cause = new Error('socket hang up');
    expect(new OutboxerError('OUTBOXER_BROKER_UNAVAILABLE', 'x', { cause }).cause).toBe(cause);
    expect('cause' in new OutboxerError('OUTBOXER_BROKER_UNAVAILABLE', 'x')).toBe(false);
    expect('cause' in new OutboxerError('OUTBOXER_BROKER_UNAVAILABLE', 'x', {})).toBe(false);
    expect(new PublishError('OUTBOXER_PUBLISH_FAILED', 'x', { cause }).cause).toBe(cause);
    expect('cause' in new PublishError('OUTBOXER_PUBLISH_FAILED', 'x')).toBe(false);
  });

  it('PublishError is retryable unless marked permanent', () => {
    expect(new PublishError('OUTBOXER_PUBLISH_FAILED', 'x').permanent).toBe(false);
    expect(new PublishError('OUTBOXER_PUBLISH_FAILED', 'x', { permanent: false }).permanent).toBe(false);
    expect(new PublishError('OUTBOXER_NO_STREAM', 'x', { permanent: true }).permanent).toBe(true);
  });
});

describe('isPermanentPublishError', () => {
  it('is true only for a PublishError marked permanent', () => {
    expect(isPermanentPublishError(new PublishError('OUTBOXER_NO_STREAM', 'x', { permanent: true }))).toBe(true);
    expect(isPermanentPublishError(new PublishError('OUTBOXER_PUBLISH_TIMEOUT', 'x'))).toBe(false);
    expect(isPermanentPublishError(new OutboxerError('OUTBOXER_NO_STREAM', 'x'))).toBe(false);
    expect(isPermanentPublishError({ permanent: true, code: 'OUTBOXER_NO_STREAM' })).toBe(false);
    expect(isPermanentPublishError(Object.assign(new Error('x'), { permanent: true }))).toBe(false);
    expect(isPermanentPublishError(undefined)).toBe(false);
  });
});

describe('describeError', () => {
  it('names the code of an OutboxerError, the name of any other Error', () => {
    expect(describeError(new PublishError('OUTBOXER_PUBLISH_TIMEOUT', 'no confirmation'))).toBe('OUTBOXER_PUBLISH_TIMEOUT: no confirmation');
    expect(describeError(new TypeError('boom'))).toBe('TypeError: boom');
  });

  it('describes a thrown non-error by its type only, never its value', () => {
    const secret = 'canary-secret-4411';
    expect(describeError(secret)).toBe('non-error thrown: string');
    expect(describeError({ secret })).toBe('non-error thrown: object');
    expect(describeError(null)).toBe('non-error thrown: object');
    expect(describeError(undefined)).toBe('non-error thrown: undefined');
    expect(describeError(42)).toBe('non-error thrown: number');
  });

  it('truncates to exactly maxLength characters with an ellipsis, and leaves shorter text alone', () => {
    const long = describeError(new Error('x'.repeat(5000)));
    expect(long).toHaveLength(1000);
    expect(long.endsWith('…')).toBe(true);
    expect(long.startsWith('Error: xxx')).toBe(true);
    expect(describeError(new Error('x'.repeat(20)), 10)).toBe('Error: xx…');
    const exact = describeError(new Error('abc'), 10); // 'Error: abc' is 10 characters
    expect(exact).toBe('Error: abc');
  });
});
