import { headers as natsHeaders, type MsgHdrs } from '@nats-io/transport-node';
import { PublishError } from '../../core/errors.js';
import { bodyBytes, type OutboxMessage } from '../../core/message.js';
import { cloudEventAttributes, type ResolvedCloudEvents } from '../cloudevents.js';
import { encodeHeaderValue } from '../header-value.js';
import { isValidSubject } from './options.js';

/** Header names outboxer sets on every NATS message (JetStream itself reads `Nats-Msg-Id`). */
export const NatsHeaderNames = Object.freeze({
  msgId: 'Nats-Msg-Id',
  id: 'Outbox-Id',
  type: 'Outbox-Type',
  key: 'Outbox-Key',
  contentType: 'Content-Type',
});

/** Prefix of the CloudEvents attributes in NATS headers (NATS protocol binding, binary content mode). */
export const CLOUD_EVENTS_NATS_PREFIX = 'ce-';

/** Ours win over a message header of the same name (compared without case). */
const OWN_HEADERS = new Set(['outbox-id', 'outbox-type', 'outbox-key', 'content-type']);
/** Printable ASCII without `:`, as the NATS header grammar allows. */
const HEADER_NAME = /^[!-9;-~]+$/;
const LINE_BREAK = /[\r\n\0]/;

function unsendable(id: string, problem: string, code: 'OUTBOXER_PUBLISH_FAILED' | 'OUTBOXER_INVALID_TOPIC' = 'OUTBOXER_PUBLISH_FAILED'): never {
  throw new PublishError(code, `message ${id} cannot be published to NATS: ${problem}`, { permanent: true });
}

/** The subject for a topic: `${prefix}.${topic}` or the topic itself; refuses what is not a plain NATS subject. */
export function subjectFor(message: OutboxMessage, prefix: string | undefined): string {
  const subject = prefix === undefined ? message.topic : `${prefix}.${message.topic}`;
  if (!isValidSubject(message.topic) || Buffer.byteLength(subject) > 1024) {
    unsendable(
      message.id,
      `topic ${JSON.stringify(message.topic.slice(0, 80))} is not a NATS subject (dot-separated tokens of [A-Za-z0-9_-:/], no spaces, wildcards, "$" or empty tokens)`,
      'OUTBOXER_INVALID_TOPIC',
    );
  }
  return subject;
}

/** The body on the wire: exactly the stored body (the JSON text's UTF-8 bytes, or the binary bytes). */
export function bodyOf(message: OutboxMessage): Uint8Array {
  return bodyBytes(message.body);
}

/**
 * The NATS headers of a message: its own headers, then Outbox-Id, Outbox-Type, Outbox-Key (when it has a key)
 * and Content-Type, and with `cloudEvents` the `ce-*` attributes. `Nats-Msg-Id` is added by the client from
 * the publish option `msgID`. Every value but Content-Type is percent-encoded (see `encodeHeaderValue`).
 * A message header named `Nats-*` is refused: JetStream acts on those (TTL, rollup, expectations).
 */
export function headersOf(message: OutboxMessage, cloudEvents?: ResolvedCloudEvents): MsgHdrs {
  const result = natsHeaders();
  for (const [name, value] of Object.entries(message.headers)) {
    const lower = name.toLowerCase();
    if (lower.startsWith('nats-')) unsendable(message.id, `header "${name.slice(0, 60)}" is reserved by NATS JetStream (Nats-*), which would act on it`);
    if (OWN_HEADERS.has(lower) || (cloudEvents !== undefined && lower.startsWith(CLOUD_EVENTS_NATS_PREFIX))) continue;
    if (!HEADER_NAME.test(name))
      unsendable(message.id, `header name ${JSON.stringify(name.slice(0, 60))} is not a NATS header name (printable ASCII, no ":" or space)`);
    if (typeof value !== 'string' || LINE_BREAK.test(value)) unsendable(message.id, `header "${name}" must be a string without CR, LF or NUL`);
    result.set(name, encodeHeaderValue(value));
  }
  for (const [what, value] of [
    ['type', message.type],
    ['key', message.key ?? ''],
  ] as const) {
    if (LINE_BREAK.test(value)) unsendable(message.id, `its ${what} holds CR, LF or NUL, which NATS headers cannot carry`);
  }
  result.set(NatsHeaderNames.id, message.id);
  result.set(NatsHeaderNames.type, encodeHeaderValue(message.type));
  if (message.key !== null) result.set(NatsHeaderNames.key, encodeHeaderValue(message.key));
  // A media type is printable ASCII by construction; generic clients read Content-Type as it is.
  result.set(NatsHeaderNames.contentType, message.contentType);
  if (cloudEvents !== undefined) {
    const attributes = { ...cloudEventAttributes(message, cloudEvents), datacontenttype: message.contentType };
    for (const [name, value] of Object.entries(attributes)) result.set(`${CLOUD_EVENTS_NATS_PREFIX}${name}`, encodeHeaderValue(value));
  }
  return result;
}

/** Bytes the headers take on the wire once the client added `Nats-Msg-Id: <msgId>` (they count against max_payload). */
export function headerBytes(headers: MsgHdrs, msgId: string): number {
  let bytes = Buffer.byteLength('NATS/1.0') + Buffer.byteLength(`\r\nNats-Msg-Id: ${msgId}`) + 4;
  for (const [name, values] of headers) {
    for (const value of values) bytes += Buffer.byteLength(`\r\n${name}: ${value}`);
  }
  return bytes;
}
