import { describe, expect, it } from 'vitest';
import { OutboxerError, type OutboxerErrorCode, PublishError } from '../../src/core/errors.js';
import { FAILURE_ACTIONS, type FailureAction, failureAction } from '../../src/core/publish-failure.js';

describe('failureAction: what a failed publish means', () => {
  const cases: [OutboxerErrorCode, { permanent?: boolean }, FailureAction][] = [
    // Faults of the environment: never counted, never parked.
    ['OUTBOXER_BROKER_UNAVAILABLE', {}, 'release'],
    ['OUTBOXER_CLOSED', {}, 'release'],
    ['OUTBOXER_UNROUTABLE', {}, 'pause-topic'],
    ['OUTBOXER_NO_EXCHANGE', {}, 'pause-topic'],
    ['OUTBOXER_NO_STREAM', {}, 'pause-topic'],
    // A missing destination stays a pause even if a publisher called it permanent.
    ['OUTBOXER_NO_STREAM', { permanent: true }, 'pause-topic'],
    ['OUTBOXER_UNROUTABLE', { permanent: true }, 'pause-topic'],
    // Faults of the message itself.
    ['OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER', {}, 'dead'],
    ['OUTBOXER_INVALID_TOPIC', {}, 'dead'],
    ['OUTBOXER_INVALID_HEADER', {}, 'dead'],
    // Outcome unknown or refused for now: counted and retried.
    ['OUTBOXER_PUBLISH_TIMEOUT', {}, 'retry'],
    ['OUTBOXER_RATE_LIMITED', {}, 'retry'],
    ['OUTBOXER_REJECTED', {}, 'dead'],
    ['OUTBOXER_PUBLISH_FAILED', {}, 'retry'],
    // A code without a fixed meaning follows the publisher's `permanent`.
    ['OUTBOXER_PUBLISH_FAILED', { permanent: true }, 'dead'],
  ];
  it.each(cases)('%s %j -> %s', (code, options, action) => {
    expect(failureAction(new PublishError(code, 'x', options))).toBe(action);
  });

  it('retries what is not an OutboxerError (a driver error or a bug in a publisher)', () => {
    expect(failureAction(new Error('boom'))).toBe('retry');
    expect(failureAction('a string')).toBe('retry');
    expect(failureAction(undefined)).toBe('retry');
    expect(failureAction(Object.assign(new Error('x'), { permanent: true, code: 'OUTBOXER_NO_STREAM' }))).toBe('retry');
  });

  it('decides by code for any OutboxerError, not only PublishError', () => {
    expect(failureAction(new OutboxerError('OUTBOXER_BROKER_UNAVAILABLE', 'x'))).toBe('release');
    expect(failureAction(new OutboxerError('OUTBOXER_NO_STREAM', 'x'))).toBe('pause-topic');
  });

  it('the table is frozen', () => {
    expect(Object.isFrozen(FAILURE_ACTIONS)).toBe(true);
  });
});
