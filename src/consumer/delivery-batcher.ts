import type { Batching } from './broker-consumer-options.js';
import { type Delivery, dispatch, keepAliveWhileHeld, runDelivery, type RunnerContext, settling } from './delivery-runner.js';
import type { HandleOutcome } from './inbox.js';
import { KeySerializer } from './key-serializer.js';

interface Queued<Tx> {
  readonly context: RunnerContext<Tx>;
  readonly delivery: Delivery;
  readonly key: string | null;
  /** Resolves the promise `dispatch` returned: the delivery is settled. */
  readonly settled: () => void;
}

/**
 * Handles deliveries several at a time, each batch in one inbox transaction (`Inbox.handleBatch`: one claim, the
 * handlers in arrival order, one commit, then the acks), keeping each key's deliveries in their order.
 *
 * A batch takes the queued deliveries in arrival order, at most `maxBatch`, passing over a key that has a delivery
 * running and every later delivery of that key; its keys count as running until the batch is settled. At most
 * `lanes` batches run their transaction at once, and while they do, deliveries queue: batches grow with the load, and
 * a delivery that finds a free lane goes at once, alone. A lone delivery goes through `runDelivery`, as without
 * batching, and holds no lane (its retries wait on its key only). After the batch's transaction, each delivery is
 * settled through `runDelivery`: acked from its outcome once the batch committed, or, when it did not, handled again
 * alone, where a failure is charged to its own message. Each key's deliveries go in order, keys side by side, and a
 * key is free again once its own deliveries are settled. docs/design/consumer-batches.md has the states and why order holds.
 */
export class DeliveryBatcher<Tx> {
  readonly maxBatch: number;
  readonly lanes: number;
  #queue: Queued<Tx>[] = [];
  readonly #runningKeys = new Set<string>();
  #lanesInUse = 0;
  #flushScheduled = false;

  constructor(maxBatch: number, lanes: number) {
    this.maxBatch = maxBatch;
    this.lanes = lanes;
  }

  /** Deliveries received and not started yet. */
  get queued(): number {
    return this.#queue.length;
  }

  /** Queues a delivery; resolves once it is settled (acked, taken off the queue, or given back). Never rejects. */
  dispatch(context: RunnerContext<Tx>, delivery: Delivery): Promise<void> {
    const stopKeepingAlive = keepAliveWhileHeld(context, delivery);
    return new Promise<void>((resolve) => {
      const settled = (): void => {
        stopKeepingAlive();
        resolve();
      };
      this.#queue.push({ context, delivery, key: delivery.raw.key ?? null, settled });
      this.#schedule();
    });
  }

  /** Flushes once the deliveries received in this turn of the event loop are queued, so that they can go together. */
  #schedule(): void {
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => {
      this.#flushScheduled = false;
      this.#flush();
    });
  }

  #flush(): void {
    while (this.#lanesInUse < this.lanes) {
      const batch = this.#take();
      if (batch.length === 0) return;
      if (batch.length === 1) {
        void this.#runAlone(batch[0] as Queued<Tx>);
        continue;
      }
      this.#lanesInUse++;
      void this.#runBatch(batch);
    }
  }

  #take(): Queued<Tx>[] {
    const batch: Queued<Tx>[] = [];
    const rest: Queued<Tx>[] = [];
    const waiting = new Set<string>();
    for (const queued of this.#queue) {
      if (queued.context.stopSignal.aborted) {
        void settling(queued.context, () => queued.delivery.release()).finally(queued.settled);
        continue;
      }
      const { key } = queued;
      const free = key === null || (!this.#runningKeys.has(key) && !waiting.has(key));
      if (free && batch.length < this.maxBatch) {
        batch.push(queued);
      } else {
        rest.push(queued);
        if (key !== null) waiting.add(key);
      }
    }
    this.#queue = rest;
    for (const { key } of batch) if (key !== null) this.#runningKeys.add(key);
    return batch;
  }

  async #runAlone(queued: Queued<Tx>): Promise<void> {
    try {
      await runDelivery(queued.context, queued.delivery);
    } finally {
      this.#free(queued.key);
      queued.settled();
    }
  }

  async #runBatch(batch: readonly Queued<Tx>[]): Promise<void> {
    const [first] = batch as [Queued<Tx>, ...Queued<Tx>[]];
    const { inbox, handler } = first.context;
    let outcomes: HandleOutcome[] | undefined;
    try {
      outcomes = await inbox.handleBatch(
        batch.map((queued) => queued.delivery.raw),
        handler,
      );
    } catch {
      outcomes = undefined; // an Inbox subclass that throws: each delivery is handled alone, where its error is seen
    } finally {
      this.#lanesInUse--;
      this.#schedule();
    }
    const runs = new Map<string | null, { queued: Queued<Tx>; outcome: HandleOutcome | undefined }[]>();
    const unkeyed: { queued: Queued<Tx>; outcome: HandleOutcome | undefined }[][] = [];
    for (const [index, queued] of batch.entries()) {
      const step = { queued, outcome: outcomes?.[index] };
      if (queued.key === null) unkeyed.push([step]);
      else runs.set(queued.key, [...(runs.get(queued.key) ?? []), step]);
    }
    await Promise.all([...runs.values(), ...unkeyed].map((run) => this.#settleInOrder(run)));
  }

  /**
   * One key's deliveries of a batch, in order: each acted on from its outcome in the batch (an ack, a retry's wait, a
   * dead letter), or handled again alone where it has none. The key is free again once they are all settled.
   */
  async #settleInOrder(run: readonly { readonly queued: Queued<Tx>; readonly outcome: HandleOutcome | undefined }[]): Promise<void> {
    try {
      for (const { queued, outcome } of run) {
        try {
          await runDelivery(queued.context, queued.delivery, outcome);
        } finally {
          queued.settled();
        }
      }
    } finally {
      this.#free(run[0]?.queued.key ?? null);
    }
  }

  #free(key: string | null): void {
    if (key !== null) this.#runningKeys.delete(key);
    this.#schedule();
  }
}

/** How a broker consumer hands over each delivery: to a batcher, or (`maxBatch` 1) one transaction per delivery behind its key. */
export type DeliveryDispatch<Tx> = (context: RunnerContext<Tx>, delivery: Delivery) => Promise<void>;

export function deliveryDispatch<Tx>(batching: Batching): DeliveryDispatch<Tx> {
  if (batching.maxBatch > 1) {
    const batcher = new DeliveryBatcher<Tx>(batching.maxBatch, batching.lanes);
    return (context, delivery) => batcher.dispatch(context, delivery);
  }
  const keys = new KeySerializer();
  return (context, delivery) => dispatch(context, keys, delivery);
}
