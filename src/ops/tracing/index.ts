/**
 * `outboxer/otel`: OpenTelemetry traces through `@opentelemetry/api` (an optional peer dependency), following the
 * messaging semantic conventions. Only this entry point imports it; importing it starts nothing.
 */
export { createDeliveryTracing } from './delivery-tracing.js';
export { createEnqueueTracing } from './enqueue-tracing.js';
export { flushTracing } from './flush-tracing.js';
export { MessagingAttributes } from './messaging-attributes.js';
export { createOtelInstrumentation, type OtelInstrumentation } from './otel-instrumentation.js';
export { creationContextOf, parseTraceparent, traceHeaders } from './trace-headers.js';
export { tracePublisher } from './trace-publisher.js';
export { TRACER_NAME, type ProducerTracingOptions, type PublisherTracingOptions, type TracingOptions } from './tracing-options.js';
export type { DeliveryAttempt, DeliveryInstrumentation, DeliverySource } from '../../consumer/delivery-instrumentation.js';
export type { EnqueueInstrumentation, EnqueueReceipt } from '../../core/ports/enqueue-instrumentation.js';
