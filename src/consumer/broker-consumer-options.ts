import { z } from 'zod';
import { ConfigurationError } from '../core/errors.js';
import { wholeNumber } from '../core/parse-options.js';
import type { DeliveryInstrumentation } from './delivery-instrumentation.js';
import type { Inbox } from './inbox.js';
import type { MessageHandler } from './message-registry.js';

/** How long a broker consumer's `stop()` waits for handlers in flight, unless told otherwise. */
export const DEFAULT_STOP_TIMEOUT_MS = 30_000;

/** The options every broker consumer takes besides its broker's own: what handles a delivery, and for how long it may finish. */
export const brokerConsumerShape = {
  inbox: z.custom<Inbox<unknown>>((value) => typeof (value as Partial<Inbox<unknown>> | null)?.handleDelivery === 'function', {
    error: 'is required: an Inbox (createInbox(...))',
  }),
  handler: z.custom<MessageHandler<unknown>>((value) => typeof value === 'function', { error: 'must be a function (message, tx) => Promise<void>' }).optional(),
  stopTimeoutMs: wholeNumber(1, 3_600_000, 'milliseconds').default(DEFAULT_STOP_TIMEOUT_MS),
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
