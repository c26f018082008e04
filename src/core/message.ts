/** Headers travel as broker headers/properties: plain string to string. */
export type MessageHeaders = Readonly<Record<string, string>>;

/** Well-known header names, documented so that every language can use them. */
export const WellKnownHeaders = {
  correlationId: 'correlation-id',
  causationId: 'causation-id',
  tenant: 'tenant',
  traceparent: 'traceparent',
  tracestate: 'tracestate',
} as const;

/**
 * A message body exactly as the producer stored it: JSON text (published as its UTF-8 bytes, unchanged), or
 * the bytes of a binary body (protobuf, Avro, ...). Never re-serialized between the table and the wire.
 */
export type MessageBody = string | Uint8Array;

/** The content type of a JSON body unless the producer names another JSON media type. */
export const JSON_CONTENT_TYPE = 'application/json';
/** The content type of a binary body unless the producer names one. */
export const BINARY_CONTENT_TYPE = 'application/octet-stream';

/** The bytes that go on the wire for a body, as a Buffer (drivers such as amqplib want one); binary bodies are wrapped, not copied. */
export function bodyBytes(body: MessageBody): Buffer {
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  return Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

/** How many bytes a body takes on the wire (UTF-8 for JSON text), without copying it. */
export function bodyByteLength(body: MessageBody): number {
  return typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.byteLength;
}

/** What a producer hands to `enqueue`. Only `topic`, `type` and `payload` are required. */
export interface OutboxMessageInput {
  /** Routing destination: AMQP routing key, NATS subject. */
  readonly topic: string;
  /** Event type, e.g. `order.created`. Consumers dispatch on it. */
  readonly type: string;
  /**
   * Any JSON-serializable value (it becomes the body as `JSON.stringify` writes it), or a `Uint8Array`/`Buffer`:
   * a binary body (protobuf, Avro, ...) published as these exact bytes.
   */
  readonly payload: unknown;
  /**
   * Media type of the body. For a JSON payload: `application/json` (the default) or another JSON type
   * (`application/vnd.acme+json`). For a binary payload: what the bytes are (`application/x-protobuf`);
   * default `application/octet-stream`.
   */
  readonly contentType?: string | undefined;
  /** Messages with the same key are published in the order they were stored. */
  readonly key?: string | undefined;
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** Supply your own UUID (e.g. to make the enqueue idempotent upstream); a UUIDv7 is made otherwise. */
  readonly id?: string | undefined;
  /** Delayed delivery: not published before this instant... */
  readonly availableAt?: Date | undefined;
  /** ...or not before this many milliseconds after the insert, on the database clock. */
  readonly delayMs?: number | undefined;
  /**
   * Makes the enqueue idempotent: a second enqueue with the same key within the store's idempotency
   * window (default 24 h) is ignored and returns the first message's id.
   */
  readonly idempotencyKey?: string | undefined;
  /**
   * The named destination this row goes to (fan-out: docs/fan-out.md). Omitted: the outbox's `routes` decide, and
   * a topic no route names goes to the relay's own publisher (the `default` destination).
   */
  readonly destination?: string | undefined;
}

/** A validated message, ready to be inserted. `body` is exactly what will be published. */
export interface NewOutboxMessage {
  readonly id: string;
  readonly topic: string;
  readonly type: string;
  readonly key: string | null;
  readonly body: MessageBody;
  readonly contentType: string;
  readonly headers: MessageHeaders;
  readonly availableAt: Date | null;
  readonly delayMs: number;
  readonly idempotencyKey: string | null;
  /** The named destination of this row; null for the relay's own publisher (the `default` destination). */
  readonly destination: string | null;
}

export type MessageState = 'pending' | 'published' | 'dead';

/** A stored message as the relay sees it after a read. */
export interface OutboxMessage {
  readonly id: string;
  /** Store order; per-key order follows it. Opaque outside the store (a bigint as text in SQL stores). */
  readonly seq: string;
  readonly topic: string;
  readonly type: string;
  readonly key: string | null;
  /** The body exactly as stored: JSON text or binary bytes. It goes on the wire unchanged. */
  readonly body: MessageBody;
  /** Media type of the body: AMQP `content-type`, NATS `Content-Type`. */
  readonly contentType: string;
  readonly headers: MessageHeaders;
  readonly createdAt: Date;
  /** Publish attempts started so far, this one included. */
  readonly attempts: number;
  readonly lastError: string | null;
  /** The named destination this row goes to; null or absent for the relay's own publisher (the `default` destination). */
  readonly destination?: string | null;
}

/** A parked (dead) message as operators see it. */
export interface DeadMessage {
  readonly id: string;
  readonly topic: string;
  readonly type: string;
  readonly key: string | null;
  readonly attempts: number;
  readonly reason: string;
  readonly createdAt: Date;
  readonly deadAt: Date;
  /** Its named destination; null for the relay's own publisher (the `default` destination). */
  readonly destination: string | null;
}
