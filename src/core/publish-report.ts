import { destinationName, readPauseKey } from './destinations.js';
import type { ClaimOutcome } from './publish-claim.js';
import type { RelayOptions } from './relay-options.js';

/**
 * Tells the logs and hooks what became of a batch's messages: published, retried, parked dead, topics paused
 * or resumed, the broker out of reach. Both engines report the same way. Returns the counts of retried and dead.
 */
export function reportOutcome(outcome: ClaimOutcome, options: RelayOptions): { readonly retried: number; readonly dead: number } {
  const { hooks, logger, owner } = options;
  let retried = 0;
  let dead = 0;
  for (const message of outcome.published) {
    hooks.onPublished?.({
      id: message.id,
      topic: message.topic,
      key: message.key,
      attempts: message.attempts,
      createdAt: message.createdAt,
      destination: destinationName(message),
    });
  }
  for (const { message, failure } of outcome.failed) {
    const destination = destinationName(message);
    const shown = message.destination == null ? {} : { destination };
    if ('dead' in failure) {
      dead++;
      logger.error({ id: message.id, topic: message.topic, ...shown, attempts: message.attempts, reason: failure.error }, 'message parked as dead');
      hooks.onDead?.({ id: message.id, topic: message.topic, attempts: message.attempts, reason: failure.error, destination });
    } else {
      retried++;
      logger.warn(
        { id: message.id, topic: message.topic, ...shown, attempts: message.attempts, error: failure.error, retryInMs: failure.retryInMs },
        'publish failed; will retry',
      );
      hooks.onRetry?.({ id: message.id, topic: message.topic, attempts: message.attempts, error: failure.error, retryInMs: failure.retryInMs, destination });
    }
  }
  for (const event of outcome.topicEvents) {
    const { topic, destination } = readPauseKey(event.topic);
    if (topic === undefined) {
      if (event.kind === 'paused')
        logger.warn(
          { owner, destination, error: event.error, retryInMs: event.retryInMs },
          'destination paused: its broker is out of reach; its messages wait without using up attempts, the other destinations go on',
        );
      else logger.info({ owner, destination, pausedMs: event.pausedMs }, 'destination resumed: its broker is reachable again');
    } else if (event.kind === 'paused') {
      logger.warn(
        { owner, topic, destination, error: event.error, retryInMs: event.retryInMs },
        'topic paused: its destination is missing; its messages wait without using up attempts and are retried with backoff',
      );
    } else {
      logger.info({ owner, topic, destination, pausedMs: event.pausedMs }, 'topic resumed: its destination exists again');
    }
    if (event.kind === 'paused') hooks.onTopicPaused?.({ topic: event.topic, error: event.error, retryInMs: event.retryInMs, destination });
    else hooks.onTopicResumed?.({ topic: event.topic, pausedMs: event.pausedMs, destination });
  }
  if (outcome.brokerUnavailable !== undefined) {
    logger.warn(
      { owner, error: outcome.brokerUnavailable, released: outcome.released.length },
      'broker unavailable; messages released without using up their attempts',
    );
    hooks.onError?.({ stage: 'publish', error: outcome.brokerUnavailable });
  }
  return { retried, dead };
}
