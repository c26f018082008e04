import type { OutboxMessageInput } from '../message.js';

/** What the store made of one enqueued message. */
export interface EnqueueReceipt {
  /** The message's own id (given, or made at validation). */
  readonly id: string;
  /** The id the store answered: the message's own, or for a repeated idempotency key the id first stored under it (nothing new was stored). */
  readonly storedAs: string;
}

/**
 * Observes the storing of a batch of messages (`Outbox` option `instrumentation`); `outboxer/otel` implements it
 * with one producer span per message whose context travels in the message's `traceparent` header.
 *
 * Contract:
 * - `enqueue` calls `store` exactly once, with the same messages in the same order. It may add headers (trace
 *   context) to a message and change nothing else; whatever it adds is validated like the producer's own headers.
 * - It resolves once `store` settled and rejects with `store`'s error unchanged when `store` rejects.
 * - `Outbox` answers the caller with what `store` resolved to; a wrapper that never calls `store` makes the
 *   enqueue fail, it cannot make it look stored.
 */
export interface EnqueueInstrumentation {
  enqueue(messages: readonly OutboxMessageInput[], store: (messages: readonly OutboxMessageInput[]) => Promise<readonly EnqueueReceipt[]>): Promise<void>;
}
