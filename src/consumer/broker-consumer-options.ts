import { z } from 'zod';
import { ConfigurationError } from '../core/errors.js';
import { wholeNumber } from '../core/parse-options.js';
import type { DeliveryInstrumentation } from './delivery-instrumentation.js';
import type { Inbox } from './inbox.js';
import type { MessageHandler } from './message-registry.js';

/** How long a broker consumer's `stop()` waits for handlers in flight, unless told otherwise. */
export const DEFAULT_STOP_TIMEOUT_MS = 30_000;

/** The most deliveries one inbox transaction may take (`maxBatch`), and the default's ceiling. */
const MAX_BATCH_LIMIT = 1000;
const DEFAULT_MAX_BATCH_CEILING = 64;

/** How a consumer batches: deliveries per inbox transaction, and how many such transactions run at once. */
export interface Batching {
  readonly maxBatch: number;
  readonly lanes: number;
}

/**
 * `maxBatch` as given, else half the consumer's window (prefetch, maxAckPending), at most 64: two batches fill the
 * window, so one can commit and ack while the other is handled. 1 turns batching off. It is 1 by default, and refused
 * above, with an `instrumentation` (a span per delivery attempt needs the delivery's own transaction) and with an
 * inbox store that cannot claim a batch in one statement (`claimMany`: PostgreSQL's over a pg Pool or PGlite; a
 * batch must not go on after an error it did not see, docs/design/consumer-batches.md, "Why it is safe").
 */
export function resolveBatching(broker: string, given: number | undefined, window: number, inbox: Inbox<unknown>, instrumented: boolean): Batching {
  const refusal = instrumented
    ? 'cannot go with instrumentation, which traces each delivery in a transaction of its own; leave maxBatch unset (or 1) to trace, or drop instrumentation to batch'
    : typeof (inbox as Partial<Inbox<unknown>>).store?.claimMany !== 'function'
      ? "cannot go with this inbox's store, which claims messages one by one (only PostgresInboxStore batches, over a pg Pool or PGlite); leave maxBatch unset (or 1)"
      : undefined;
  if (refusal !== undefined && given !== undefined && given > 1) {
    throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `${broker} consumer option maxBatch: ${given} ${refusal}`, {
      options: instrumented ? ['maxBatch', 'instrumentation'] : ['maxBatch', 'inbox'],
    });
  }
  const maxBatch = given ?? (refusal !== undefined ? 1 : Math.max(1, Math.min(DEFAULT_MAX_BATCH_CEILING, Math.floor(window / 2))));
  return Object.freeze({ maxBatch, lanes: Math.max(2, Math.ceil(window / maxBatch)) });
}

/** The options every broker consumer takes besides its broker's own: what handles a delivery, and for how long it may finish. */
export const brokerConsumerShape = {
  inbox: z.custom<Inbox<unknown>>((value) => typeof (value as Partial<Inbox<unknown>> | null)?.handleDelivery === 'function', {
    error: 'is required: an Inbox (createInbox(...))',
  }),
  handler: z.custom<MessageHandler<unknown>>((value) => typeof value === 'function', { error: 'must be a function (message, tx) => Promise<void>' }).optional(),
  stopTimeoutMs: wholeNumber(1, 3_600_000, 'milliseconds').default(DEFAULT_STOP_TIMEOUT_MS),
  maxBatch: wholeNumber(1, MAX_BATCH_LIMIT).optional(),
  instrumentation: z
    .custom<DeliveryInstrumentation>((value) => typeof (value as Partial<DeliveryInstrumentation> | null)?.process === 'function', {
      error: 'must have a process(attempt, handle) method (e.g. createOtelInstrumentation(...).delivery from outboxer/otel)',
    })
    .optional(),
};

/**
 * Resolves a consumer's connection by its broker's publisher rules, naming a fault as the consumer's option:
 * `<broker> publisher option x` becomes `<broker> consumer option x`.
 */
export function connectionByPublisherRules<T>(broker: string, resolve: () => T): T {
  try {
    return resolve();
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    throw new ConfigurationError(error.code, error.message.replace(`${broker} publisher option`, `${broker} consumer option`), { options: error.options });
  }
}
