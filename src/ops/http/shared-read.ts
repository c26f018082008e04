/** One read of a shared value: the value and when the read finished (an answer's `at`). */
export interface Reading<T> {
  readonly at: Date;
  readonly value: T;
}

interface Entry<T> {
  readonly reading: Promise<Reading<T>>;
  /** When the read finished (`Infinity` while it runs, so it is always shared). */
  doneAt: number;
}

/**
 * One store read shared by every request: requests that arrive while it runs share it, and its result serves the
 * requests of the next `ttlMs` after it finished (0: shared while it runs only). A failed read is not kept: the
 * next request reads again. `invalidate()` after a change makes the next request read anew, so that the requester
 * of the change sees it.
 */
export class SharedRead<T> {
  readonly #read: () => Promise<T>;
  readonly #ttlMs: number;
  readonly #now: () => number;
  #entry: Entry<T> | undefined;

  constructor(read: () => Promise<T>, ttlMs: number, now: () => number = Date.now) {
    this.#read = read;
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  get(): Promise<Reading<T>> {
    const kept = this.#entry;
    // A read still running has doneAt Infinity: shared whatever the ttl.
    if (kept !== undefined && this.#now() - kept.doneAt < this.#ttlMs) return kept.reading;
    const entry: Entry<T> = {
      doneAt: Number.POSITIVE_INFINITY,
      reading: this.#read().then(
        (value) => {
          entry.doneAt = this.#now();
          return Object.freeze({ at: new Date(entry.doneAt), value });
        },
        (error: unknown) => {
          if (this.#entry === entry) this.#entry = undefined;
          throw error;
        },
      ),
    };
    this.#entry = entry;
    return entry.reading;
  }

  /** Forgets the reading, finished or still running (its requesters still get it): the next `get()` reads again. */
  invalidate(): void {
    this.#entry = undefined;
  }
}
