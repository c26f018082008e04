import type { TopicLag } from '../../core/ports/outbox-operator.js';

/** How long a lag read serves later requests: `topicLag` reads every pending row, and dashboards poll. */
export const TOPIC_LAG_CACHE_MS = 5000;

/** One lag read: its topics and when it finished (the answer's `at`). */
export interface TopicLagReading {
  readonly at: Date;
  readonly topics: readonly TopicLag[];
}

interface Entry {
  readonly reading: Promise<TopicLagReading>;
  /** When the read finished (`Infinity` while it runs, so it is always shared). */
  doneAt: number;
}

/**
 * Shares `topicLag` between requests, per limit: one read at a time, shared by every request that arrives while
 * it runs, and its result served for `ttlMs` after it finished. A failed read is not kept: the next request reads again.
 * The server asks with one limit only, the largest (`OperatorAccess`), and cuts each answer to its own limit: a
 * limit per read would make every distinct `limit` a read of every pending row.
 */
export class TopicLagCache {
  readonly #read: (limit: number) => Promise<TopicLag[]>;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #entries = new Map<number, Entry>();

  constructor(read: (limit: number) => Promise<TopicLag[]>, ttlMs = TOPIC_LAG_CACHE_MS, now: () => number = Date.now) {
    this.#read = read;
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  get(limit: number): Promise<TopicLagReading> {
    const now = this.#now();
    for (const [key, entry] of this.#entries) {
      if (now - entry.doneAt >= this.#ttlMs) this.#entries.delete(key);
    }
    const kept = this.#entries.get(limit);
    if (kept !== undefined) return kept.reading;
    const entry: Entry = {
      doneAt: Number.POSITIVE_INFINITY,
      reading: this.#read(limit).then(
        (topics) => {
          entry.doneAt = this.#now();
          return Object.freeze({ at: new Date(entry.doneAt), topics: Object.freeze(topics) });
        },
        (error: unknown) => {
          if (this.#entries.get(limit) === entry) this.#entries.delete(limit);
          throw error;
        },
      ),
    };
    this.#entries.set(limit, entry);
    return entry.reading;
  }
}
