import type { HandleOutcome } from './inbox.js';
import type { RawDelivery } from './received-message.js';

/** Where a delivery was consumed from, named as the OpenTelemetry messaging conventions name it. */
export interface DeliverySource {
  readonly system: 'rabbitmq' | 'nats';
  /** RabbitMQ: `{exchange}:{routing key}:{queue}`; NATS: the subject (prefix included). */
  readonly destination: string;
  /** RabbitMQ: the queue; NATS: the durable consumer. */
  readonly subscription: string;
  /** RabbitMQ: the routing key (the topic). */
  readonly routingKey?: string;
}

/** One attempt at handling one delivery through the inbox. */
export interface DeliveryAttempt {
  readonly raw: RawDelivery;
  readonly source: DeliverySource;
  /** The inbox's consumer name. */
  readonly consumer: string;
}

/**
 * Observes each handling attempt of a delivery (consumer option `instrumentation`); `outboxer/otel` implements it
 * with a `process` span continued from the delivery's `traceparent`, the handler running in its context.
 *
 * Contract: `process` calls `handle` exactly once and resolves once it settled (rejecting with its error when it
 * rejects). The consumer acts on what `handle` resolved to; a wrapper cannot change the outcome.
 */
export interface DeliveryInstrumentation {
  process(attempt: DeliveryAttempt, handle: () => Promise<HandleOutcome>): Promise<void>;
}
