import { describe, expect, it } from 'vitest';
import { PublishError } from '../../src/core/errors.js';
import type { OutboxMessage } from '../../src/core/message.js';
import type { Publisher } from '../../src/core/ports.js';
import { publishClaim } from '../../src/core/publish-claim.js';
import { deadReason } from '../../src/core/publish-failure.js';
import { resolveRelayOptions } from '../../src/core/relay-options.js';
import { TopicPauses } from '../../src/core/topic-pauses.js';

const ACTION = "fix the cause, then run 'outboxer dead retry <id>' to publish it again";

function message(attempts: number, lastError: string | null = null): OutboxMessage {
  return {
    id: '00000000-0000-7000-8000-000000000001',
    seq: '1',
    topic: 'orders',
    type: 'order.created',
    key: 'k',
    body: '{}',
    contentType: 'application/json',
    headers: {},
    createdAt: new Date(0),
    attempts,
    lastError,
  };
}

/** The reason publishClaim stores for one message that `publish` fails with `error`, at `retry.maxAttempts` 3. */
async function reasonFor(m: OutboxMessage, error: unknown): Promise<{ error: string; dead?: true; retryInMs?: number } | undefined> {
  const publisher: Publisher = { name: 'fake', capabilities: {}, publish: () => Promise.reject(error), close: async () => undefined };
  const options = resolveRelayOptions({ leaseMs: 5000, publishTimeoutMs: 50, retry: { baseDelayMs: 100, maxDelayMs: 1000, maxAttempts: 3, jitter: 0 } });
  const outcome = await publishClaim([m], {
    publisher,
    options,
    publishDeadline: performance.now() + 60_000,
    isStopping: () => false,
    pauses: new TopicPauses(options.errorBackoffMs, options.maxErrorBackoffMs),
  });
  return outcome.failed[0]?.failure as { error: string; dead?: true; retryInMs?: number } | undefined;
}

describe('the reason stored for a dead message: what happened, then what the operator can do', () => {
  const nacked = new PublishError('OUTBOXER_PUBLISH_FAILED', 'message 0193 was nacked by the broker: it did not store it');

  it('after the last attempt: the failure, the attempts, and `outboxer dead retry <id>`', async () => {
    const failure = await reasonFor(message(3), nacked);
    expect(failure).toMatchObject({ dead: true });
    expect(failure?.error).toBe(
      `OUTBOXER_PUBLISH_FAILED: message 0193 was nacked by the broker: it did not store it; parked as dead after 3 failed attempts (retry.maxAttempts): ${ACTION}`,
    );
  });

  it('a retried failure says only what happened: the relay logs the retry', async () => {
    const failure = await reasonFor(message(1), nacked);
    expect(failure).toMatchObject({
      error: 'OUTBOXER_PUBLISH_FAILED: message 0193 was nacked by the broker: it did not store it',
      retryInMs: expect.any(Number),
    });
  });

  it('a fault of the message itself: parked at once, and the same action', async () => {
    const tooLarge = new PublishError('OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER', 'message 0193 is 2000 bytes, over the limit of 1000', { permanent: true });
    const failure = await reasonFor(message(1), tooLarge);
    expect(failure?.error).toBe(
      `OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER: message 0193 is 2000 bytes, over the limit of 1000; parked as dead at once, as it cannot be published as it is: ${ACTION}`,
    );
  });

  it('relays that never finished an attempt: the last error they left, and the same action', async () => {
    const failure = await reasonFor(message(4, 'OUTBOXER_PUBLISH_TIMEOUT: no confirmation'), nacked);
    expect(failure?.error).toBe(
      `gave up after 3 attempts: the relay holding it stopped or lost its lease each time (last error: OUTBOXER_PUBLISH_TIMEOUT: no confirmation); parked as dead: ${ACTION}`,
    );
  });

  it('stays within 1000 characters, the action kept whole at the end', () => {
    for (const reason of [
      deadReason({ kind: 'attempts', error: new PublishError('OUTBOXER_PUBLISH_FAILED', 'x'.repeat(5000)), attempts: 10 }),
      deadReason({ kind: 'abandoned', attempts: 10, lastError: 'y'.repeat(5000) }),
    ]) {
      expect(reason.length).toBeLessThanOrEqual(1000);
      expect(reason.endsWith(ACTION)).toBe(true);
      expect(reason).toContain('…; parked as dead');
    }
  });
});
