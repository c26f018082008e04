import { createHash } from 'node:crypto';
import { PublishError } from '../../core/errors.js';
import { bodyBytes, type OutboxMessage } from '../../core/message.js';
import { GROUP_ID } from './options.js';

/**
 * Message attributes outboxer sets on every SQS message and SNS notification. SQS carries at most 10
 * attributes (and SNS raw delivery hands them on to SQS), so the message headers travel together as one JSON
 * object in `outbox-headers` instead of one attribute each.
 */
export const OutboxAwsAttributes = Object.freeze({
  id: 'outbox-id',
  type: 'outbox-type',
  /** The outbox topic, which the queue or SNS topic alone may not tell (several topics can share one). */
  topic: 'outbox-topic',
  /** Present only when the message has a key. */
  key: 'outbox-key',
  contentType: 'content-type',
  /** The message headers as a JSON object of strings; present only when there are headers. */
  headers: 'outbox-headers',
  /** `base64` when the body is the base64 of the stored bytes (binary bodies); absent when the body is the stored text. */
  bodyEncoding: 'outbox-body-encoding',
});

export interface StringAttribute {
  readonly DataType: 'String';
  readonly StringValue: string;
}

/** One message as a batch entry, before the service's own field names. */
export interface AwsWireMessage {
  readonly id: string;
  readonly body: string;
  readonly attributes: Readonly<Record<string, StringAttribute>>;
  /** Set for FIFO destinations only. */
  readonly groupId: string | undefined;
  readonly deduplicationId: string | undefined;
  /** Bytes it counts against the size limits: body plus each attribute's name, data type and value. */
  readonly bytes: number;
}

/** Characters SQS accepts in a body or string attribute: #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF. */
const SQS_TEXT = /^[\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]*$/u;

/** Whether SQS (and SNS delivering to SQS) can carry `text` as it is. */
export function isSqsText(text: string): boolean {
  return SQS_TEXT.test(text);
}

/** The MessageGroupId of a key: the key itself when SQS accepts it, else `sha256:` and the hex of its SHA-256. */
export function groupIdFor(key: string | null, nullKeyGroupId: string): string {
  if (key === null) return nullKeyGroupId;
  if (GROUP_ID.test(key)) return key;
  return `sha256:${createHash('sha256').update(key, 'utf8').digest('hex')}`;
}

function refuse(message: OutboxMessage, service: string, why: string): never {
  throw new PublishError('OUTBOXER_REJECTED', `message ${message.id} cannot be published to ${service}: ${why}`, { permanent: true });
}

/**
 * The wire form of one message. A JSON body goes as its text; a binary body (or, rarely, JSON text holding a
 * character SQS refuses, such as U+FFFF) goes as the base64 of the stored bytes, with `outbox-body-encoding:
 * base64`. FIFO destinations get MessageGroupId = the key (`groupIdFor`) and MessageDeduplicationId = the id.
 */
export function toAwsWire(
  message: OutboxMessage,
  options: { readonly service: string; readonly fifo: boolean; readonly nullKeyGroupId: string },
): AwsWireMessage {
  const { service } = options;
  const asText = typeof message.body === 'string' && message.body !== '' && isSqsText(message.body);
  const body = asText ? message.body : bodyBytes(message.body).toString('base64');
  if (body === '') refuse(message, service, 'its body is empty, and an SQS or SNS message needs at least one character');
  const values: [string, string][] = [
    [OutboxAwsAttributes.id, message.id],
    [OutboxAwsAttributes.type, message.type],
    [OutboxAwsAttributes.topic, message.topic],
    [OutboxAwsAttributes.contentType, message.contentType],
  ];
  if (message.key !== null) values.push([OutboxAwsAttributes.key, message.key]);
  if (Object.keys(message.headers).length > 0) values.push([OutboxAwsAttributes.headers, JSON.stringify(message.headers)]);
  if (!asText) values.push([OutboxAwsAttributes.bodyEncoding, 'base64']);
  const attributes: Record<string, StringAttribute> = {};
  let bytes = Buffer.byteLength(body, 'utf8');
  for (const [name, value] of values) {
    if (!isSqsText(value)) refuse(message, service, `its ${name} holds a character SQS refuses (U+FFFE, U+FFFF or a lone surrogate)`);
    attributes[name] = { DataType: 'String', StringValue: value };
    bytes += Buffer.byteLength(name) + 'String'.length + Buffer.byteLength(value, 'utf8');
  }
  return {
    id: message.id,
    body,
    attributes,
    groupId: options.fifo ? groupIdFor(message.key, options.nullKeyGroupId) : undefined,
    deduplicationId: options.fifo ? message.id : undefined,
    bytes,
  };
}

/** A refusal of a message over the size limit, before any request. */
export function tooLarge(message: OutboxMessage, service: string, bytes: number, limit: number): PublishError {
  return new PublishError(
    'OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER',
    `message ${message.id} is ${bytes} bytes on the wire (body${typeof message.body === 'string' ? '' : ' as base64'} plus attributes), over the ${service} limit of ${limit} bytes (maxMessageBytes); lower maxPayloadBytes at enqueue`,
    { permanent: true },
  );
}

/** The last segment of a queue URL path or topic ARN ends in `.fifo`. */
export function isFifoName(name: string): boolean {
  return name.endsWith('.fifo');
}
