import { describeError, OutboxerError } from '../core/errors.js';
import type { Logger } from '../core/ports.js';
import { retryDelayMs, type RetryPolicy } from '../core/retry-policy.js';
import type { DeliveryInstrumentation, DeliverySource } from './delivery-instrumentation.js';
import type { HandleOutcome, Inbox } from './inbox.js';
import type { KeySerializer } from './key-serializer.js';
import type { MessageHandler } from './message-registry.js';
import type { RawDelivery } from './received-message.js';

/** One broker delivery as the runner sees it; each broker consumer adapts its own to this. */
export interface Delivery {
  readonly raw: RawDelivery;
  /** Where it came from; given when the consumer has an `instrumentation`. */
  readonly source?: DeliverySource;
  /** Settles it as done (after the inbox committed, or for a duplicate). */
  ack(): Promise<void>;
  /** Takes it off the queue for good: dead in the inbox, or malformed. */
  dead(reason: string): Promise<void>;
  /** Gives it back to the broker for another delivery (on stop, while it was waiting to be retried). */
  release(): Promise<void>;
  /** Tells the broker it is still being worked on (NATS `working()`); called every `keepAliveMs`. */
  keepAlive?(): void;
}

/** Test and observability hooks of a broker consumer. */
export interface ConsumerHooks {
  /**
   * Awaited after the inbox committed (or found a duplicate) and before the broker ack. A test hook: a
   * process killed here has applied the message without acking it, and the redelivery must be skipped.
   */
  beforeAck?(event: { id: string; status: 'processed' | 'duplicate' }): Promise<void> | void;
  /** A delivery that could not be rebuilt (no UUID id or no type) was rejected at the broker. */
  onMalformed?(event: { reason: string }): void;
  /** The inbox could not be reached (database down); the delivery is held and tried again. */
  onError?(event: { error: string; retryInMs: number }): void;
}

export interface RunnerContext<Tx> {
  readonly inbox: Inbox<Tx>;
  readonly handler: MessageHandler<Tx> | undefined;
  readonly hooks: ConsumerHooks;
  readonly logger: Logger;
  /** Observes each handling attempt (a trace span); undefined: none. */
  readonly instrumentation: DeliveryInstrumentation | undefined;
  /** Backoff while the inbox's database cannot be reached. */
  readonly errorBackoff: RetryPolicy;
  readonly keepAliveMs: number | undefined;
  /** Aborted once the consumer is stopping: waits end early and the delivery is released. */
  readonly stopSignal: AbortSignal;
}

/**
 * Drives one delivery to its end: handle through the inbox, wait and handle again while it should be
 * retried (holding the delivery, so later messages of its key wait behind it), then ack or take it off
 * the queue. Ack happens only after the inbox transaction committed. Never throws.
 */
export async function runDelivery<Tx>(context: RunnerContext<Tx>, delivery: Delivery, first?: HandleOutcome): Promise<void> {
  await settling(context, () => drive(context, delivery, first));
}

/** Runs `work`, which settles a delivery, and logs instead of throwing when it fails (the broker then redelivers). */
export async function settling<Tx>(context: RunnerContext<Tx>, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    context.logger.error(
      { consumer: context.inbox.consumer, error: describeError(error) },
      'consumer: settling a delivery failed; the broker will redeliver it',
    );
  }
}

/**
 * Queues a delivery behind the earlier ones of its key and runs it; keeps it alive at the broker from
 * receipt (a delivery waiting behind its key must not be redelivered elsewhere) until it is settled.
 */
export function dispatch<Tx>(context: RunnerContext<Tx>, keys: KeySerializer, delivery: Delivery): Promise<void> {
  const stopKeepingAlive = keepAliveWhileHeld(context, delivery);
  return keys.run(delivery.raw.key ?? null, () => runDelivery(context, delivery)).finally(stopKeepingAlive);
}

/** Calls the delivery's `keepAlive` every `keepAliveMs` (when both are given) until the returned function is called. */
export function keepAliveWhileHeld<Tx>(context: RunnerContext<Tx>, delivery: Delivery): () => void {
  if (context.keepAliveMs === undefined || delivery.keepAlive === undefined) return () => undefined;
  const timer = setInterval(() => delivery.keepAlive?.(), context.keepAliveMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** `first`: the outcome of an attempt already made (in a batch), acted on before any new attempt. */
async function drive<Tx>(context: RunnerContext<Tx>, delivery: Delivery, first: HandleOutcome | undefined): Promise<void> {
  let storeFailures = 0;
  let made = first;
  for (;;) {
    if (made === undefined && context.stopSignal.aborted) return delivery.release();
    let outcome: HandleOutcome;
    try {
      outcome = made ?? (await handleOnce(context, delivery));
      made = undefined;
      storeFailures = 0;
    } catch (error) {
      storeFailures++;
      const retryInMs = retryDelayMs(context.errorBackoff, storeFailures);
      context.logger.warn(
        { consumer: context.inbox.consumer, error: describeError(error), retryInMs },
        'consumer: the inbox could not record the outcome; holding the delivery',
      );
      safely(() => context.hooks.onError?.({ error: describeError(error), retryInMs }));
      await pause(retryInMs, context.stopSignal);
      continue;
    }
    switch (outcome.status) {
      case 'processed':
      case 'duplicate':
        return ackHandled(context, delivery, outcome.status);
      case 'dead':
        return delivery.dead(outcome.reason);
      case 'malformed':
        context.logger.warn({ consumer: context.inbox.consumer, topic: delivery.raw.topic, reason: outcome.reason }, 'consumer: malformed delivery rejected');
        safely(() => context.hooks.onMalformed?.({ reason: outcome.reason }));
        return delivery.dead(outcome.reason);
      case 'retry':
        await pause(outcome.retryInMs, context.stopSignal);
        continue;
    }
  }
}

/** Acks a delivery whose inbox transaction committed (or that was a duplicate), after the `beforeAck` hook. */
async function ackHandled<Tx>(context: RunnerContext<Tx>, delivery: Delivery, status: 'processed' | 'duplicate'): Promise<void> {
  await context.hooks.beforeAck?.({ id: delivery.raw.id?.toLowerCase() ?? '', status });
  return delivery.ack();
}

/** One attempt through the inbox, inside the instrumentation when there is one; the outcome is the inbox's own. */
async function handleOnce<Tx>(context: RunnerContext<Tx>, delivery: Delivery): Promise<HandleOutcome> {
  const handle = (): Promise<HandleOutcome> => context.inbox.handleDelivery(delivery.raw, context.handler);
  const { instrumentation } = context;
  if (instrumentation === undefined || delivery.source === undefined) return handle();
  let outcome: HandleOutcome | undefined;
  let calls = 0;
  await instrumentation.process({ raw: delivery.raw, source: delivery.source, consumer: context.inbox.consumer }, async () => {
    if (++calls > 1)
      throw new OutboxerError('OUTBOXER_INVALID_OPTION', 'the consumer instrumentation called handle twice; a delivery is handled once per attempt');
    outcome = await handle();
    return outcome;
  });
  if (outcome === undefined)
    throw new OutboxerError('OUTBOXER_INVALID_OPTION', 'the consumer instrumentation resolved without calling handle; the delivery is held and tried again');
  return outcome;
}

/** Waits `ms`, or less if `signal` aborts first; leaves no listener behind. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

function safely(call: () => void): void {
  try {
    call();
  } catch {
    // an observer must not break consuming
  }
}
