import { PublishError } from '../../core/errors.js';

/** Sends one batch to one destination; resolves with each entry's failure in order (undefined: stored). */
export type SendBatch<T> = (destination: string, entries: readonly T[]) => Promise<readonly (Error | undefined)[]>;

export interface MicroBatcherOptions<T> {
  /** 0: send at the end of the current event-loop turn; else wait up to this many ms for more entries. */
  readonly windowMs: number;
  readonly maxEntries: number;
  /** Bound on the summed `bytes` of one batch. */
  readonly maxBytes: number;
  readonly send: SendBatch<T>;
}

interface Waiting<T> {
  readonly entry: T;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

interface Forming<T> {
  readonly waiting: Waiting<T>[];
  bytes: number;
  readonly cancel: () => void;
}

/**
 * Gathers concurrent publishes to one destination into batch requests of at most `maxEntries` entries and
 * `maxBytes` bytes, and settles each publish with its own entry's outcome.
 *
 * Batching never reorders a key: the relay awaits a key's previous publish before it starts the next, so two
 * messages of one key are never waiting here at the same time, and a batch holds at most one message per key.
 */
export class MicroBatcher<T> {
  readonly #options: MicroBatcherOptions<T>;
  readonly #forming = new Map<string, Forming<T>>();
  readonly #sending = new Set<Promise<void>>();

  constructor(options: MicroBatcherOptions<T>) {
    this.#options = options;
  }

  /** Adds an entry of `bytes` (at most `maxBytes`) for `destination`; settles once its batch is answered. */
  add(destination: string, entry: T, bytes: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let forming = this.#forming.get(destination);
      if (forming !== undefined && forming.bytes + bytes > this.#options.maxBytes) {
        this.#flush(destination);
        forming = undefined;
      }
      if (forming === undefined) {
        forming = { waiting: [], bytes: 0, cancel: this.#schedule(destination) };
        this.#forming.set(destination, forming);
      }
      forming.waiting.push({ entry, resolve, reject });
      forming.bytes += bytes;
      if (forming.waiting.length >= this.#options.maxEntries) this.#flush(destination);
    });
  }

  /** Sends every batch still forming now, and waits until every batch sent is answered. */
  async drain(): Promise<void> {
    for (const destination of [...this.#forming.keys()]) this.#flush(destination);
    await Promise.allSettled([...this.#sending]);
  }

  #schedule(destination: string): () => void {
    if (this.#options.windowMs === 0) {
      const immediate = setImmediate(() => this.#flush(destination));
      return () => clearImmediate(immediate);
    }
    const timer = setTimeout(() => this.#flush(destination), this.#options.windowMs);
    return () => clearTimeout(timer);
  }

  #flush(destination: string): void {
    const forming = this.#forming.get(destination);
    if (forming === undefined) return;
    this.#forming.delete(destination);
    forming.cancel();
    const sending = this.#send(destination, forming.waiting);
    this.#sending.add(sending);
    void sending.finally(() => this.#sending.delete(sending));
  }

  async #send(destination: string, batch: readonly Waiting<T>[]): Promise<void> {
    let outcomes: readonly (Error | undefined)[];
    try {
      outcomes = await this.#options.send(
        destination,
        batch.map((waiting) => waiting.entry),
      );
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
      return;
    }
    batch.forEach((waiting, index) => {
      const failure =
        index < outcomes.length
          ? outcomes[index]
          : new PublishError('OUTBOXER_PUBLISH_FAILED', `the batch answer for ${destination} named no outcome for this entry`);
      if (failure === undefined) waiting.resolve();
      else waiting.reject(failure);
    });
  }
}
