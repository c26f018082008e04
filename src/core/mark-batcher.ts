/** One published message to mark, with the lease token that fences the mark. */
export interface PublishedMark {
  readonly token: string;
  readonly id: string;
}

interface Pending {
  readonly token: string;
  readonly ids: readonly string[];
  resolve(marked: number): void;
  reject(error: unknown): void;
}

const MAX_MARKS_PER_STATEMENT = 5000;

/**
 * Coalesces the marks of many small hand-offs into one statement: while one write is in flight, the
 * marks that arrive queue up and go together in the next, so a busy relay makes a handful of mark
 * statements per second instead of one per committed transaction.
 */
export class MarkBatcher {
  readonly #write: (marks: readonly PublishedMark[]) => Promise<ReadonlySet<string>>;
  #queue: Pending[] = [];
  #flushing = false;

  constructor(write: (marks: readonly PublishedMark[]) => Promise<ReadonlySet<string>>) {
    this.#write = write;
  }

  /** Resolves with how many of `ids` were still leased under `token` and are now marked. */
  mark(token: string, ids: readonly string[]): Promise<number> {
    if (ids.length === 0) return Promise.resolve(0);
    return new Promise((resolve, reject) => {
      this.#queue.push({ token, ids, resolve, reject });
      if (!this.#flushing) {
        this.#flushing = true;
        setImmediate(() => void this.#flush());
      }
    });
  }

  async #flush(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch: Pending[] = [];
      let size = 0;
      while (this.#queue.length > 0 && (batch.length === 0 || size + (this.#queue[0] as Pending).ids.length <= MAX_MARKS_PER_STATEMENT)) {
        const next = this.#queue.shift() as Pending;
        batch.push(next);
        size += next.ids.length;
      }
      try {
        const marked = await this.#write(batch.flatMap((p) => p.ids.map((id) => ({ token: p.token, id }))));
        for (const p of batch) p.resolve(p.ids.filter((id) => marked.has(id)).length);
      } catch (error) {
        for (const p of batch) p.reject(error);
      }
    }
    this.#flushing = false;
  }
}
