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

/** What a producer hands to `enqueue`. Only `topic`, `type` and `payload` are required. */
export interface OutboxMessageInput {
  /** Routing destination: AMQP routing key, NATS subject. */
  readonly topic: string;
  /** Event type, e.g. `order.created`. Consumers dispatch on it. */
  readonly type: string;
  /** Any JSON-serializable value; it becomes the message body, as JSON. */
  readonly payload: unknown;
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
}

/** A validated message, ready to be inserted. `payloadJson` is the exact body that will be published. */
export interface NewOutboxMessage {
  readonly id: string;
  readonly topic: string;
  readonly type: string;
  readonly key: string | null;
  readonly payloadJson: string;
  readonly headers: MessageHeaders;
  readonly availableAt: Date | null;
  readonly delayMs: number;
  readonly idempotencyKey: string | null;
}

export type MessageState = 'pending' | 'published' | 'dead';

/** A stored message as the relay sees it after a claim. */
export interface OutboxMessage {
  readonly id: string;
  /** Store order; per-key order follows it. Opaque outside the store (a bigint as text in SQL stores). */
  readonly seq: string;
  readonly topic: string;
  readonly type: string;
  readonly key: string | null;
  /** The payload as JSON text: the body that goes on the wire. */
  readonly payloadJson: string;
  readonly headers: MessageHeaders;
  readonly createdAt: Date;
  /** Publish attempts started so far, this one included. */
  readonly attempts: number;
  readonly lastError: string | null;
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
}
