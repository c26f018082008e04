import { SpanStatusCode, type Attributes, type Span } from '@opentelemetry/api';
import { describeError, OutboxerError } from '../../core/errors.js';
import { WellKnownHeaders, type MessageHeaders } from '../../core/message.js';

/**
 * Attribute names of the OpenTelemetry messaging semantic conventions (development status) that outboxer
 * sets, and its own under `outboxer.`. No attribute ever holds a payload, a header value other than the
 * correlation id, a URL or a credential.
 */
export const MessagingAttributes = Object.freeze({
  system: 'messaging.system',
  operationName: 'messaging.operation.name',
  operationType: 'messaging.operation.type',
  destinationName: 'messaging.destination.name',
  messageId: 'messaging.message.id',
  conversationId: 'messaging.message.conversation_id',
  rabbitMqRoutingKey: 'messaging.rabbitmq.destination.routing_key',
  consumerGroup: 'messaging.consumer.group.name',
  errorType: 'error.type',
  messageType: 'outboxer.message.type',
  attempts: 'outboxer.message.attempts',
  duplicateOf: 'outboxer.message.duplicate_of',
  inboxConsumer: 'outboxer.inbox.consumer',
  inboxOutcome: 'outboxer.inbox.outcome',
});

const SHORT = 255;

/** A span name `{operation} {destination}`, the destination left out when it is not a usable name. */
export function spanName(operation: string, destination: string | undefined): string {
  return destination === undefined || destination === '' || destination.length > SHORT ? operation : `${operation} ${destination}`;
}

/** The conventions' per-message attributes: id, conversation id (the `correlation-id` header) and outboxer's type. */
export function messageAttributes(attributes: Attributes, message: { id?: unknown; type?: unknown; headers?: MessageHeaders | undefined }): Attributes {
  if (typeof message.id === 'string') attributes[MessagingAttributes.messageId] = message.id;
  if (typeof message.type === 'string' && message.type.length <= SHORT) attributes[MessagingAttributes.messageType] = message.type;
  const correlation = message.headers?.[WellKnownHeaders.correlationId];
  if (typeof correlation === 'string' && correlation.length <= SHORT) attributes[MessagingAttributes.conversationId] = correlation;
  return attributes;
}

/** A low-cardinality class of an error: an outboxer code, else the error's class name, else `_OTHER`. */
export function errorTypeOf(error: unknown): string {
  if (error instanceof OutboxerError) return error.code;
  if (error instanceof Error && error.name !== '') return error.name;
  return '_OTHER';
}

/** The class at the start of a described error (`OUTBOXER_…: …`, `TypeError: …`), as `describeError` writes it. */
export function errorTypeOfDescription(description: string): string {
  return /^([A-Za-z_][\w.$]{0,99}): /.exec(description)?.[1] ?? '_OTHER';
}

/** Marks a span failed: `error.type` and an error status with the error described as outboxer's logs describe it. */
export function failSpan(span: Span, errorType: string, description: string): void {
  span.setAttribute(MessagingAttributes.errorType, errorType);
  span.setStatus({ code: SpanStatusCode.ERROR, message: description });
}

export function failSpanWith(span: Span, error: unknown): void {
  failSpan(span, errorTypeOf(error), describeError(error, 500));
}
