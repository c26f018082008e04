import { bodyBytes, type OutboxMessage } from '../../core/message.js';

/** The fields outboxer writes on every stream entry, in this order; the producer's headers come as `h:<name>` between them and `body`. */
export const RedisFieldNames = Object.freeze({
  id: 'id',
  type: 'type',
  key: 'key',
  contentType: 'content-type',
  body: 'body',
});

/** Prefix of a header field: header `traceparent` is field `h:traceparent`. */
export const REDIS_HEADER_PREFIX = 'h:';

/** One XADD: the stream key and the entry's fields (insertion order is the order on the wire). */
export interface RedisEntry {
  readonly stream: string;
  readonly fields: Readonly<Record<string, string | Buffer>>;
  readonly bodyBytes: number;
}

/** The stream a topic goes to: the prefix, then the topic, with nothing in between. */
export function streamFor(topic: string, streamPrefix: string): string {
  return `${streamPrefix}${topic}`;
}

/**
 * The entry for a message: `id`, `type`, `key` (absent when the message has none), `content-type`, one `h:<name>`
 * field per header, and `body`, the stored body byte for byte. Field values are binary-safe in Redis: UTF-8 keys and
 * header values go as they are, with no encoding. A row that breaks the table contract is refused first (permanent).
 */
export function toRedisEntry(message: OutboxMessage, streamPrefix: string): RedisEntry {
  const fields: Record<string, string | Buffer> = {
    [RedisFieldNames.id]: message.id,
    [RedisFieldNames.type]: message.type,
  };
  if (message.key !== null) fields[RedisFieldNames.key] = message.key;
  fields[RedisFieldNames.contentType] = message.contentType;
  for (const [name, value] of Object.entries(message.headers)) fields[`${REDIS_HEADER_PREFIX}${name}`] = value;
  const body = bodyBytes(message.body);
  fields[RedisFieldNames.body] = body;
  return { stream: streamFor(message.topic, streamPrefix), fields, bodyBytes: body.length };
}
