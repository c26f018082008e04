import type { OutboxMessageInput } from '../../src/core/message.js';

/**
 * One producer transaction of writer number `writer`: stores `messages` and commits, or, with `rollback`, stores
 * them and rolls back. Resolves with the ids the enqueue returned either way.
 */
export type WriteTransaction = (messages: readonly OutboxMessageInput[], rollback: boolean, writer: number) => Promise<readonly string[]>;

export interface WriterLoadOptions {
  readonly writers: number;
  /** Each writer's topic. */
  readonly topic: (writer: number) => string;
  /** Keys per writer; a key belongs to one writer, whose transactions follow one another, so its order is the commit order. */
  readonly keysPerWriter?: number;
  /** Every n-th transaction of a writer rolls back. */
  readonly rollbackEvery?: number;
  /** Pause between a writer's transactions: paces the load so that it lasts while faults happen. */
  readonly pauseMs?: number;
  /** A writer stops by itself after this many transactions. */
  readonly maxTransactions?: number;
}

/** Concurrent writers enqueueing keyed messages (every fifth unkeyed) in transactions, until stopped. */
export interface WriterLoad {
  /** Committed messages, each key's in its commit order (what `checkDeliveries` expects). */
  readonly expected: { id: string; key: string | null }[];
  /** Ids enqueued in transactions that rolled back: never to be delivered. */
  readonly rolledBack: string[];
  /** Writer failures (none expected: writers are not under fault). */
  readonly failures: unknown[];
  /** Stops every writer after its current transaction and waits for them. */
  stop(): Promise<void>;
}

export function startWriters(write: WriteTransaction, options: WriterLoadOptions): WriterLoad {
  const keys = options.keysPerWriter ?? 6;
  const rollbackEvery = options.rollbackEvery ?? 6;
  const pauseMs = options.pauseMs ?? 20;
  const maxTransactions = options.maxTransactions ?? 10_000;
  const expected: { id: string; key: string | null }[] = [];
  const rolledBack: string[] = [];
  const failures: unknown[] = [];
  let stopping = false;
  const writer = async (w: number) => {
    for (let txn = 0; !stopping && txn < maxTransactions; txn++) {
      const size = 1 + (txn % 4);
      const batch = Array.from({ length: size }, (_, i) => {
        const n = txn * 4 + i;
        return { topic: options.topic(w), type: 'order.changed', payload: { w, txn, i }, ...(n % 5 === 4 ? {} : { key: `w${w}-k${n % keys}` }) };
      });
      const rollback = txn % rollbackEvery === rollbackEvery - 1;
      try {
        const ids = await write(batch, rollback, w);
        if (rollback) rolledBack.push(...ids);
        else ids.forEach((id, i) => expected.push({ id, key: batch[i]?.key ?? null }));
      } catch (error) {
        failures.push(error);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  };
  const running = Promise.all(Array.from({ length: options.writers }, (_, w) => writer(w)));
  return {
    expected,
    rolledBack,
    failures,
    async stop() {
      stopping = true;
      await running;
    },
  };
}
