import { context, isSpanContextValid, SpanKind, trace, type Attributes, type Context, type Link, type Span } from '@opentelemetry/api';
import type { DeliveryAttempt, DeliveryInstrumentation } from '../../consumer/delivery-instrumentation.js';
import type { HandleOutcome } from '../../consumer/inbox.js';
import { errorTypeOfDescription, failSpan, failSpanWith, messageAttributes, MessagingAttributes, spanName } from './messaging-attributes.js';
import { creationContextOf } from './trace-headers.js';
import { resolveTracingOptions, type TracingOptions, type TracingSettings } from './tracing-options.js';

/**
 * The consumer option `instrumentation`: each handling attempt is a `process {destination}` span (kind CONSUMER)
 * whose parent is the creation context the delivery carries (its `traceparent`) and which links to it, and the
 * inbox transaction and the handler run in its context, so spans the handler opens nest under it. An attempt
 * that ends in a retry, a dead message or a malformed delivery has an error status; a duplicate is marked as such.
 */
export function createDeliveryTracing(options: TracingOptions = {}): DeliveryInstrumentation {
  const settings = resolveTracingOptions('delivery', options);
  return Object.freeze({
    async process(attempt: DeliveryAttempt, handle: () => Promise<HandleOutcome>): Promise<void> {
      const { span, parent } = startProcessSpan(settings, attempt);
      try {
        recordOutcome(span, await context.with(trace.setSpan(parent, span), handle));
      } catch (error) {
        failSpanWith(span, error);
        throw error;
      } finally {
        span.end();
      }
    },
  });
}

function startProcessSpan(settings: TracingSettings, attempt: DeliveryAttempt): { span: Span; parent: Context } {
  const { raw, source } = attempt;
  const ambient = context.active();
  const creation = creationContextOf(raw.headers, settings.propagator);
  const links: Link[] = [];
  const creationSpan = creation === undefined ? undefined : trace.getSpanContext(creation);
  if (creationSpan !== undefined) links.push({ context: creationSpan });
  // Parented to the creation context, a process span keeps the span it ran under (if any) as a link.
  const ambientSpan = trace.getSpanContext(ambient);
  if (creation !== undefined && ambientSpan !== undefined && isSpanContextValid(ambientSpan)) links.push({ context: ambientSpan });
  const attributes: Attributes = {
    [MessagingAttributes.system]: source.system,
    [MessagingAttributes.operationName]: 'process',
    [MessagingAttributes.operationType]: 'process',
    [MessagingAttributes.destinationName]: source.destination,
    [MessagingAttributes.inboxConsumer]: attempt.consumer,
  };
  if (source.routingKey !== undefined) attributes[MessagingAttributes.rabbitMqRoutingKey] = source.routingKey;
  if (source.system === 'nats') attributes[MessagingAttributes.consumerGroup] = source.subscription;
  messageAttributes(attributes, { id: raw.id?.toLowerCase(), type: raw.type, headers: raw.headers });
  const parent = creation ?? ambient;
  const span = settings.tracer.startSpan(spanName('process', source.destination), { kind: SpanKind.CONSUMER, attributes, links }, parent);
  return { span, parent };
}

function recordOutcome(span: Span, outcome: HandleOutcome): void {
  span.setAttribute(MessagingAttributes.inboxOutcome, outcome.status);
  switch (outcome.status) {
    case 'processed':
      span.setAttribute(MessagingAttributes.attempts, outcome.attempts);
      return;
    case 'duplicate':
      return;
    case 'retry':
      span.setAttribute(MessagingAttributes.attempts, outcome.attempts);
      return failSpan(
        span,
        errorTypeOfDescription(outcome.error),
        `handler failed (attempt ${outcome.attempts}; retry in ${outcome.retryInMs} ms): ${outcome.error}`,
      );
    case 'dead':
      span.setAttribute(MessagingAttributes.attempts, outcome.attempts);
      return failSpan(span, errorTypeOfDescription(outcome.reason), `dead after ${outcome.attempts} attempt(s): ${outcome.reason}`);
    case 'malformed':
      return failSpan(span, 'OUTBOXER_MALFORMED_MESSAGE', outcome.reason);
  }
}
