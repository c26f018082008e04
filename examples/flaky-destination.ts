import { PublishError, type OutboxMessage, type Publisher } from '../src/index.js';

/**
 * An in-memory destination for the demo: it "stores" messages in an array and nacks the first
 * attempt of the n-th distinct message, to show a failed publish being retried and delivered.
 */
export function createFlakyDestination(options: {
  failFirstAttemptOf: number;
  say: (who: string, text: string) => void;
  /** Called for each stored message, like a subscriber of the broker (it may get copies). */
  deliver?: (message: OutboxMessage) => void;
}): Publisher & { received: OutboxMessage[] } {
  const received: OutboxMessage[] = [];
  const seen: string[] = [];
  return {
    name: 'memory',
    capabilities: {},
    received,
    async publish(message) {
      if (!seen.includes(message.id)) seen.push(message.id);
      if (seen.indexOf(message.id) + 1 === options.failFirstAttemptOf && message.attempts === 1) {
        throw new PublishError('OUTBOXER_PUBLISH_FAILED', `destination nacked message ${message.id} (simulated)`);
      }
      received.push(message);
      options.say('broker', `received ${message.topic} ${message.id} key=${message.key ?? '-'} ${String(message.body)}`);
      options.deliver?.(message);
    },
    async close() {},
  };
}
