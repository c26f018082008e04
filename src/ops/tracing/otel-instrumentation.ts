import type { DeliveryInstrumentation } from '../../consumer/delivery-instrumentation.js';
import type { Publisher } from '../../core/ports.js';
import type { EnqueueInstrumentation } from '../../core/ports/enqueue-instrumentation.js';
import { createDeliveryTracing } from './delivery-tracing.js';
import { createEnqueueTracing } from './enqueue-tracing.js';
import { tracePublisher } from './trace-publisher.js';
import { resolveTracingOptions, type ProducerTracingOptions } from './tracing-options.js';

/** The three places outboxer traces, configured alike. */
export interface OtelInstrumentation {
  /** For `new Outbox(store, { instrumentation })`: a `create` span per enqueued message, stored in its `traceparent`. */
  readonly enqueue: EnqueueInstrumentation;
  /** Wraps the relay's publisher: a `publish` span per publish, continuing the message's trace. */
  publisher(publisher: Publisher): Publisher;
  /** For the RabbitMQ and NATS consumers' `instrumentation`: a `process` span per handling attempt, the handler inside it. */
  readonly delivery: DeliveryInstrumentation;
}

/**
 * OpenTelemetry tracing for the whole path, enqueue to inbox handler, in one call: the tracer provider and
 * propagator given, or the global ones (an SDK registered later is picked up). `system` names the broker the
 * relay publishes to (`rabbitmq`, `nats`): the enqueue spans cannot know it otherwise.
 */
export function createOtelInstrumentation(options: ProducerTracingOptions): OtelInstrumentation {
  resolveTracingOptions('producer', options); // refuses a bad option here, before any of the three is made
  const { system, tracerProvider, propagator, destinationName } = options;
  const shared = { ...(tracerProvider === undefined ? {} : { tracerProvider }), ...(propagator === undefined ? {} : { propagator }) };
  return Object.freeze({
    enqueue: createEnqueueTracing(options),
    publisher: (publisher: Publisher) => tracePublisher(publisher, { ...shared, system, ...(destinationName === undefined ? {} : { destinationName }) }),
    delivery: createDeliveryTracing(shared),
  });
}
