import { describeError, PublishError } from './errors.js';
import { bodyByteLength, type OutboxMessage } from './message.js';
import type { FailedMessage, Publisher } from './ports.js';
import { deadReason, failureAction } from './publish-failure.js';
import type { RelayOptions } from './relay-options.js';
import { retryInMs, shouldPark } from './retry-policy.js';
import { checkStoredMessage } from './stored-message-check.js';
import type { PublishPermits } from './publish-window.js';
import type { TopicEvent, TopicPauses } from './topic-pauses.js';

/** Messages held back because their topic is paused: held uncounted, due again after `delayMs`. */
export interface HeldMessages {
  readonly messages: OutboxMessage[];
  readonly delayMs: number;
  /** Why the topic is paused, for `last_error`. */
  readonly error: string;
}

/** What became of each message of one batch (a claim, as engine v1 called it); the relay turns it into fenced completions. */
export interface ClaimOutcome {
  readonly published: OutboxMessage[];
  readonly failed: { message: OutboxMessage; failure: FailedMessage }[];
  /** Never attempted (their key stopped behind a failure, the lease ran short, or the relay is stopping). */
  readonly released: OutboxMessage[];
  /**
   * Set when the broker was out of reach or refused the relay (the `release` action): those messages were
   * released uncounted; the relay should back off.
   */
  brokerUnavailable?: string;
  /**
   * By topic: messages held because their topic's destination is missing (and the rest of their key behind
   * them), released uncounted until the pause runs out.
   */
  readonly held: Map<string, HeldMessages>;
  /** Topic pauses that began or ended during this batch, for the relay to report once. */
  readonly topicEvents: TopicEvent[];
}

export interface PublishContext {
  readonly publisher: Publisher;
  readonly options: RelayOptions;
  /** Monotonic ms (performance.now) after which no new publish may start under this lease. */
  readonly publishDeadline: number;
  readonly isStopping: () => boolean;
  /** The relay's paused topics, shared by all its claims. */
  readonly pauses: TopicPauses;
  /** A permit per publish from a window shared with the relay's other batches; without it, `maxInFlight` per claim. */
  readonly permits?: PublishPermits;
}

/**
 * Publishes one claim: messages of one key strictly one after another (a key never has two in flight,
 * and a retryable failure holds back the rest of its key), different keys and unkeyed messages in
 * parallel up to `maxInFlight`.
 */
export async function publishClaim(messages: readonly OutboxMessage[], context: PublishContext): Promise<ClaimOutcome> {
  const outcome: ClaimOutcome = { published: [], failed: [], released: [], held: new Map(), topicEvents: [] };
  const queue = groupIntoChains(messages);
  const workers = Math.min(context.options.maxInFlight, queue.length);
  let next = 0;
  const runWorker = async (): Promise<void> => {
    while (next < queue.length) {
      const chain = queue[next++];
      if (chain !== undefined) await publishChain(chain, context, outcome);
    }
  };
  await Promise.all(Array.from({ length: workers }, runWorker));
  return outcome;
}

function groupIntoChains(messages: readonly OutboxMessage[]): OutboxMessage[][] {
  const chains: OutboxMessage[][] = [];
  const byKey = new Map<string, OutboxMessage[]>();
  for (const message of messages) {
    if (message.key === null) {
      chains.push([message]);
      continue;
    }
    let chain = byKey.get(message.key);
    if (chain === undefined) {
      chain = [];
      byKey.set(message.key, chain);
      chains.push(chain);
    }
    chain.push(message);
  }
  return chains;
}

async function publishChain(chain: readonly OutboxMessage[], context: PublishContext, outcome: ClaimOutcome): Promise<void> {
  for (let index = 0; index < chain.length; index++) {
    // the permit comes first: the lease deadline is checked after any wait for it
    await context.permits?.acquire();
    try {
      if (!(await publishNext(chain, index, context, outcome))) return;
    } finally {
      context.permits?.release();
    }
  }
}

/** Publishes `chain[index]` and records what became of it; false when the rest of the chain must not go now. */
async function publishNext(chain: readonly OutboxMessage[], index: number, context: PublishContext, outcome: ClaimOutcome): Promise<boolean> {
  const { options, pauses } = context;
  const message = chain[index] as OutboxMessage;
  if (context.isStopping() || performance.now() >= context.publishDeadline) {
    outcome.released.push(...chain.slice(index));
    return false;
  }
  // a paused topic holds before anything else: a held message is never parked, whatever its attempts
  const heldForMs = pauses.remainingMs(message.topic, performance.now());
  if (heldForMs > 0) {
    hold(outcome, message.topic, chain.slice(index), heldForMs, pauses.reason(message.topic) ?? 'topic paused');
    return false;
  }
  if (message.attempts > options.retry.maxAttempts) {
    const reason = deadReason({ kind: 'abandoned', attempts: message.attempts - 1, lastError: message.lastError });
    outcome.failed.push({ message, failure: { id: message.id, error: reason, dead: true } });
    return true;
  }
  const error = await attempt(message, context);
  if (error === undefined) {
    outcome.published.push(message);
    const pausedMs = pauses.resume(message.topic, performance.now());
    if (pausedMs !== undefined) outcome.topicEvents.push({ kind: 'resumed', topic: message.topic, pausedMs });
    return true;
  }
  const description = describeError(error);
  switch (failureAction(error)) {
    case 'release':
      outcome.brokerUnavailable = description;
      outcome.released.push(...chain.slice(index));
      return false;
    case 'pause-topic': {
      const { delayMs, started } = pauses.pause(message.topic, description, performance.now());
      if (started) outcome.topicEvents.push({ kind: 'paused', topic: message.topic, error: description, retryInMs: delayMs });
      // the held rows say since when (`relayHoldReason`): what operators read from any process
      hold(outcome, message.topic, chain.slice(index), delayMs, pauses.reason(message.topic) ?? description);
      return false;
    }
    case 'dead':
      outcome.failed.push({ message, failure: { id: message.id, error: deadReason({ kind: 'dead', error }), dead: true } });
      return true;
    case 'retry':
      if (shouldPark(options.retry, message.attempts)) {
        outcome.failed.push({ message, failure: { id: message.id, error: deadReason({ kind: 'attempts', error, attempts: message.attempts }), dead: true } });
        return true;
      }
      outcome.failed.push({ message, failure: { id: message.id, error: description, retryInMs: retryInMs(options.retry, message.attempts, error) } });
      outcome.released.push(...chain.slice(index + 1));
      return false;
  }
}

/** Holds a paused topic's message and the rest of its key behind it (they may not overtake it), by topic. */
function hold(outcome: ClaimOutcome, topic: string, messages: readonly OutboxMessage[], delayMs: number, error: string): void {
  const group = outcome.held.get(topic);
  if (group === undefined) outcome.held.set(topic, { messages: [...messages], delayMs, error });
  else group.messages.push(...messages);
}

function attempt(message: OutboxMessage, context: PublishContext): Promise<unknown> {
  try {
    checkStoredMessage(message);
  } catch (error) {
    return Promise.resolve(error);
  }
  const limit = context.publisher.capabilities.maxMessageBytes;
  const bytes = limit === undefined ? 0 : bodyByteLength(message.body);
  if (limit !== undefined && bytes > limit) {
    return Promise.resolve(new PublishError(
      'OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER',
      `message ${message.id} is ${bytes} bytes, over ${context.publisher.name}'s limit of ${limit}; lower maxPayloadBytes at enqueue`,
      { permanent: true },
    ));
  }
  // one promise and one timer per publish: at tens of thousands a second, each extra allocation shows in the heap
  return new Promise<unknown>((resolve) => {
    const timer = setTimeout(
      () => resolve(new PublishError('OUTBOXER_PUBLISH_TIMEOUT', `no confirmation for message ${message.id} from ${context.publisher.name} within ${context.options.publishTimeoutMs} ms`)),
      context.options.publishTimeoutMs,
    );
    const settle = (outcome: unknown): void => {
      clearTimeout(timer);
      resolve(outcome);
    };
    try {
      // a confirmation that loses the race to the timeout resolves nothing twice: the first settle wins
      context.publisher.publish(message).then(() => settle(undefined), settle);
    } catch (error) {
      settle(error);
    }
  });
}
