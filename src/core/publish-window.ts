/** What one batch's publishes take from a relay's `PublishWindow`: a permit per publish awaiting confirmation. */
export interface PublishPermits {
  acquire(): Promise<void>;
  release(): void;
}

interface Waiter {
  readonly order: number;
  readonly grant: () => void;
}

/**
 * The publishes awaiting confirmation at once, across all the batches of one relay (`maxInFlight`). A free
 * permit goes to the oldest batch first: batches then finish one after another instead of all together, so
 * that one batch's completion and the next read run while a later batch keeps the broker busy.
 */
export class PublishWindow {
  #free: number;
  readonly #waiting: Waiter[] = [];

  constructor(size: number) {
    this.#free = size;
  }

  /** Permits for the batch numbered `order` (batches are numbered in the order they were read). */
  permits(order: number): PublishPermits {
    return { acquire: () => this.#acquire(order), release: () => this.#release() };
  }

  #acquire(order: number): Promise<void> {
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve();
    }
    return new Promise((grant) => {
      let at = this.#waiting.length;
      while (at > 0 && (this.#waiting[at - 1] as Waiter).order > order) at--;
      this.#waiting.splice(at, 0, { order, grant });
    });
  }

  #release(): void {
    const next = this.#waiting.shift();
    if (next === undefined) this.#free++;
    else next.grant();
  }
}
