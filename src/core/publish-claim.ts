import { type Destination, destinationName, destinationPauseKey, Destinations, keyOf, topicPauseKey } from './destinations.js';
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
  /**
   * With named destinations: the destinations found unavailable in this batch (name: error). Their messages were
   * held uncounted (`held`), and the relay went on with the others.
   */
  unavailable?: Map<string, string>;
}

export interface PublishContext {
  /** The relay's own publisher: rows without a destination, unless `destinations` says otherwise. */
  readonly publisher: Publisher;
  /** The relay's publishers by destination (fan-out); default: `publisher` alone. */
  readonly destinations?: Destinations;
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
  const destinations = context.destinations ?? new Destinations(context.publisher, context.options.destinations);
  context = { ...context, destinations };
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
    const chainKey = keyOf(message) as string;
    let chain = byKey.get(chainKey);
    if (chain === undefined) {
      chain = [];
      byKey.set(chainKey, chain);
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
  const destination = (context.destinations as Destinations).of(message.destination);
  const topicKey = topicPauseKey(message);
  // an operator's pause holds before anything else, even a destination this relay lacks: never parked, never counted
  const operator = operatorHold(message, destination?.pauseKey ?? destinationPauseKey(destinationName(message)), pauses);
  if (operator !== undefined) {
    hold(outcome, operator.key, chain.slice(index), operator.ms, pauses.reason(operator.key) ?? 'paused by an operator');
    return false;
  }
  if (destination === undefined) {
    const error = `OUTBOXER_UNKNOWN_DESTINATION: no destination ${message.destination} on this relay; add it to the relay's destinations (or --config), or let a relay that has it publish`;
    const { delayMs, started } = pauses.pause(topicKey, error, performance.now());
    if (started) outcome.topicEvents.push({ kind: 'paused', topic: topicKey, error, retryInMs: delayMs });
    hold(outcome, topicKey, chain.slice(index), delayMs, pauses.reason(topicKey) ?? error);
    return false;
  }
  // a paused topic holds before the attempts are looked at: a held message is never parked, whatever its attempts
  const pause = heldBy(topicKey, destination, pauses);
  if (pause !== undefined) {
    hold(outcome, pause.key, chain.slice(index), pause.ms, pauses.reason(pause.key) ?? 'topic paused');
    return false;
  }
  if (message.attempts > options.retry.maxAttempts) {
    const reason = deadReason({ kind: 'abandoned', attempts: message.attempts - 1, lastError: message.lastError });
    outcome.failed.push({ message, failure: { id: message.id, error: reason, dead: true } });
    return true;
  }
  const error = await attempt(message, destination, context);
  if (error === undefined) {
    outcome.published.push(message);
    resumed(outcome, pauses, destination.pauseKey);
    resumed(outcome, pauses, topicKey);
    return true;
  }
  const description = describeError(error);
  switch (failureAction(error)) {
    case 'release': {
      if (!(context.destinations as Destinations).fansOut) {
        outcome.brokerUnavailable = description;
        outcome.released.push(...chain.slice(index));
        return false;
      }
      // one destination's broker out of reach holds that destination only: the relay goes on with the others
      const key = destination.pauseKey;
      const { delayMs, started } = pauses.pause(key, description, performance.now());
      if (started) outcome.topicEvents.push({ kind: 'paused', topic: key, error: description, retryInMs: delayMs });
      (outcome.unavailable ??= new Map()).set(destination.name, description);
      hold(outcome, key, chain.slice(index), delayMs, pauses.reason(key) ?? description);
      return false;
    }
    case 'pause-topic': {
      const { delayMs, started } = pauses.pause(topicKey, description, performance.now());
      if (started) outcome.topicEvents.push({ kind: 'paused', topic: topicKey, error: description, retryInMs: delayMs });
      // the held rows say since when (`relayHoldReason`): what operators read from any process
      hold(outcome, topicKey, chain.slice(index), delayMs, pauses.reason(topicKey) ?? description);
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

/**
 * The operator's pause that holds a message now, if any: of its topic (every destination), or of its whole
 * destination (`destinationKey`, `*@<name>`; `*@default` for a row without a destination).
 */
function operatorHold(message: OutboxMessage, destinationKey: string, pauses: TopicPauses): { readonly key: string; readonly ms: number } | undefined {
  const now = performance.now();
  if (pauses.isOperatorPaused(message.topic)) return { key: message.topic, ms: pauses.remainingMs(message.topic, now) };
  if (pauses.isOperatorPaused(destinationKey)) return { key: destinationKey, ms: pauses.remainingMs(destinationKey, now) };
  return undefined;
}

/**
 * The relay's own pause that holds a message now, if any: its whole destination out of reach, or its topic
 * missing at its destination.
 */
function heldBy(topicKey: string, destination: Destination, pauses: TopicPauses): { readonly key: string; readonly ms: number } | undefined {
  const now = performance.now();
  const whole = pauses.remainingMs(destination.pauseKey, now);
  if (whole > 0) return { key: destination.pauseKey, ms: whole };
  const topic = pauses.remainingMs(topicKey, now);
  return topic > 0 ? { key: topicKey, ms: topic } : undefined;
}

/** A publish went through: ends the pause of `key`, if there was one, and reports it. */
function resumed(outcome: ClaimOutcome, pauses: TopicPauses, key: string): void {
  const pausedMs = pauses.resume(key, performance.now());
  if (pausedMs !== undefined) outcome.topicEvents.push({ kind: 'resumed', topic: key, pausedMs });
}

/** Holds a paused topic's message and the rest of its key behind it (they may not overtake it), by topic. */
function hold(outcome: ClaimOutcome, topic: string, messages: readonly OutboxMessage[], delayMs: number, error: string): void {
  const group = outcome.held.get(topic);
  if (group === undefined) outcome.held.set(topic, { messages: [...messages], delayMs, error });
  else group.messages.push(...messages);
}

function attempt(stored: OutboxMessage, destination: Destination, context: PublishContext): Promise<unknown> {
  try {
    checkStoredMessage(stored);
  } catch (error) {
    return Promise.resolve(error);
  }
  const message = destination.shape(stored);
  const publisher = destination.publisher;
  const limit = publisher.capabilities.maxMessageBytes;
  const bytes = limit === undefined ? 0 : bodyByteLength(message.body);
  if (limit !== undefined && bytes > limit) {
    return Promise.resolve(
      new PublishError(
        'OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER',
        `message ${message.id} is ${bytes} bytes, over ${publisher.name}'s limit of ${limit}; lower maxPayloadBytes at enqueue`,
        { permanent: true },
      ),
    );
  }
  // one promise and one timer per publish: at tens of thousands a second, each extra allocation shows in the heap
  return new Promise<unknown>((resolve) => {
    const timer = setTimeout(
      () =>
        resolve(
          new PublishError(
            'OUTBOXER_PUBLISH_TIMEOUT',
            `no confirmation for message ${message.id} from ${publisher.name} within ${context.options.publishTimeoutMs} ms`,
          ),
        ),
      context.options.publishTimeoutMs,
    );
    const settle = (outcome: unknown): void => {
      clearTimeout(timer);
      resolve(outcome);
    };
    try {
      // a confirmation that loses the race to the timeout resolves nothing twice: the first settle wins
      publisher.publish(message).then(() => settle(undefined), settle);
    } catch (error) {
      settle(error);
    }
  });
}
