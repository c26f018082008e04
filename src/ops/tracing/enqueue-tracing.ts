import { context, SpanKind, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';
import type { OutboxMessageInput } from '../../core/message.js';
import type { EnqueueInstrumentation } from '../../core/ports/enqueue-instrumentation.js';
import { failSpanWith, messageAttributes, MessagingAttributes, spanName } from './messaging-attributes.js';
import { creationContextOf, traceHeaders } from './trace-headers.js';
import { resolveTracingOptions, type ProducerTracingOptions, type TracingSettings } from './tracing-options.js';

/**
 * The `Outbox` option `instrumentation`: one `create {destination}` span (kind PRODUCER) per message, a child of
 * the caller's active span, lasting until the insert settled. Its context is the message's creation context:
 * written into the message's headers (`traceparent`, `tracestate`) before validation, so the row stores it and
 * the relay publishes it unchanged. A message that already carries a trace context is the producer's own
 * creation context: it is kept as it is and gets no span, as the messaging conventions ask.
 */
export function createEnqueueTracing(options: ProducerTracingOptions): EnqueueInstrumentation {
  const settings = resolveTracingOptions('producer', options);
  return Object.freeze({
    async enqueue(messages: readonly OutboxMessageInput[], store: Parameters<EnqueueInstrumentation['enqueue']>[1]): Promise<void> {
      const parent = context.active();
      const spans: (Span | undefined)[] = [];
      const prepared = messages.map((message) => {
        const span = needsSpan(message, settings) ? startCreateSpan(settings, message, parent) : undefined;
        spans.push(span);
        if (span === undefined) return message;
        const headers = traceHeaders(trace.setSpan(parent, span), settings.propagator);
        // the producer's own headers win over a propagator's (a `baggage` they set themselves)
        return Object.keys(headers).length === 0 ? message : { ...message, headers: { ...headers, ...message.headers } };
      });
      try {
        const receipts = await store(prepared);
        receipts.forEach((receipt, i) => {
          const span = spans[i];
          if (span === undefined) return;
          span.setAttribute(MessagingAttributes.messageId, receipt.id);
          if (receipt.storedAs !== receipt.id) span.setAttribute(MessagingAttributes.duplicateOf, receipt.storedAs);
        });
      } catch (error) {
        for (const span of spans) if (span !== undefined) failSpanWith(span, error);
        throw error;
      } finally {
        for (const span of spans) span?.end();
      }
    },
  });
}

/** A message to trace: an object whose headers (if any) are an object carrying no creation context of the producer's. */
function needsSpan(message: OutboxMessageInput, settings: TracingSettings): boolean {
  if (typeof message !== 'object' || message === null) return false;
  const { headers } = message;
  if (headers === undefined) return true;
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) return false;
  return Object.keys(headers).length === 0 || creationContextOf(headers, settings.propagator) === undefined;
}

function startCreateSpan(settings: TracingSettings, message: OutboxMessageInput, parent: Context): Span {
  const destination = typeof message.topic === 'string' ? settings.destinationName(message.topic) : undefined;
  const attributes: Attributes = {
    [MessagingAttributes.system]: settings.system,
    [MessagingAttributes.operationName]: 'create',
    [MessagingAttributes.operationType]: 'create',
  };
  if (destination !== undefined) attributes[MessagingAttributes.destinationName] = destination;
  if (settings.system === 'rabbitmq' && typeof message.topic === 'string') attributes[MessagingAttributes.rabbitMqRoutingKey] = message.topic;
  messageAttributes(attributes, message);
  return settings.tracer.startSpan(spanName('create', destination), { kind: SpanKind.PRODUCER, attributes }, parent);
}
