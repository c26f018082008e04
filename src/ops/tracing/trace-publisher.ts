import { context, ROOT_CONTEXT, SpanKind, trace, type Attributes, type Link } from '@opentelemetry/api';
import type { OutboxMessage } from '../../core/message.js';
import type { Publisher, PublisherCapabilities } from '../../core/ports.js';
import type { BrokerConnectionState } from '../../core/relay-health.js';
import { failSpanWith, messageAttributes, MessagingAttributes, spanName } from './messaging-attributes.js';
import { creationContextOf, traceHeaders } from './trace-headers.js';
import { resolveTracingOptions, type PublisherTracingOptions, type TracingSettings } from './tracing-options.js';

/**
 * Wraps a publisher so that every publish is a `publish {destination}` span (operation type `send`) from the
 * publish until the broker's confirmation, with `error.type` and an error status when it fails.
 *
 * A message stored with a creation context (its `traceparent`, written at enqueue) continues that trace: the
 * span is its child, links to it, has kind CLIENT, and the message goes out unchanged, so consumers see the
 * creation context. A message without one (a plain SQL producer) starts a trace: the span has kind PRODUCER and
 * its context is added to the published headers (not to the row). `name`, `capabilities`, `close`, and `verify`
 * and `connectionState` when the publisher has them, are the wrapped publisher's.
 */
export function tracePublisher(publisher: Publisher, options: PublisherTracingOptions = {}): Publisher {
  const settings = resolveTracingOptions('publisher', options);
  const system = settings.system ?? publisher.name;
  const traced: Publisher = {
    get name(): string {
      return publisher.name;
    },
    get capabilities(): PublisherCapabilities {
      return publisher.capabilities;
    },
    publish: (message) => publishTraced(publisher, settings, system, message),
    close: () => publisher.close(),
  };
  if (publisher.verify !== undefined) traced.verify = () => (publisher.verify as () => Promise<void>).call(publisher);
  if (publisher.connectionState !== undefined) traced.connectionState = () => (publisher.connectionState as () => BrokerConnectionState).call(publisher);
  return Object.freeze(traced);
}

async function publishTraced(publisher: Publisher, settings: TracingSettings, system: string, message: OutboxMessage): Promise<void> {
  const creation = creationContextOf(message.headers, settings.propagator);
  const creationSpan = creation === undefined ? undefined : trace.getSpanContext(creation);
  const parent = creation ?? ROOT_CONTEXT;
  const destination = settings.destinationName(message.topic);
  const attributes: Attributes = {
    [MessagingAttributes.system]: system,
    [MessagingAttributes.operationName]: 'publish',
    [MessagingAttributes.operationType]: 'send',
    [MessagingAttributes.destinationName]: destination,
    [MessagingAttributes.attempts]: message.attempts,
  };
  if (system === 'rabbitmq') attributes[MessagingAttributes.rabbitMqRoutingKey] = message.topic;
  messageAttributes(attributes, message);
  const links: Link[] = creationSpan === undefined ? [] : [{ context: creationSpan }];
  const kind = creation === undefined ? SpanKind.PRODUCER : SpanKind.CLIENT;
  const span = settings.tracer.startSpan(spanName('publish', destination), { kind, attributes, links }, parent);
  const active = trace.setSpan(parent, span);
  let outgoing = message;
  if (creation === undefined) {
    const headers = traceHeaders(active, settings.propagator);
    // ours replace a `traceparent` a SQL producer wrote that is no trace context
    if (Object.keys(headers).length > 0) outgoing = { ...message, headers: { ...message.headers, ...headers } };
  }
  try {
    await context.with(active, () => publisher.publish(outgoing));
  } catch (error) {
    failSpanWith(span, error);
    throw error;
  } finally {
    span.end();
  }
}
