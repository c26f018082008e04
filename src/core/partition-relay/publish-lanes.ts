import type { PartitionEntry } from './partition-book.js';

/**
 * How many batches may publish at once: `lanes` while some partition has a backlog, else one. Without a backlog every
 * read covers every idle partition, so a second batch in flight would only split what one read after the first
 * batch's publishes gathers, and a read and its completion cost the database nearly as much for twenty rows as for
 * forty (measured in docs/design/relay-loop.md).
 */
export function lanesNow(held: Iterable<PartitionEntry>, lanes: number): number {
  for (const entry of held) if (entry.backlog && !entry.draining) return lanes;
  return 1;
}

/**
 * The batches publishing now, and whether another may start: as many as `lanesNow` allows, and every lane once the
 * oldest batch in flight has been publishing for `slowAfterMs` (a slow confirm, a slow destination), so that it holds
 * the other partitions' new rows that long at most, not until its publish timeout.
 */
export class PublishLanes {
  readonly #lanes: number;
  readonly #slowAfterMs: number;
  /** The start of each batch publishing, oldest first (a set keeps insertion order). */
  readonly #starts = new Set<{ readonly at: number }>();
  #alarmAt = Number.POSITIVE_INFINITY;

  constructor(lanes: number, slowAfterMs: number) {
    this.#lanes = lanes;
    this.#slowAfterMs = slowAfterMs;
  }

  get publishing(): number {
    return this.#starts.size;
  }

  /**
   * Counts a batch publishing from `now`; the function returned ends it (a batch that is completing no longer counts)
   * and clears the alarm: the relay reads when a batch ends, and a refused read sets the alarm again.
   */
  begin(now: number): () => void {
    const start = { at: now };
    this.#starts.add(start);
    return () => {
      this.#starts.delete(start);
      this.#alarmAt = Number.POSITIVE_INFINITY;
    };
  }

  /**
   * Whether no other batch may start publishing now. When only the one-lane limit refuses, the alarm is set for the
   * moment the oldest batch in flight counts as slow (a batch that ends sooner wakes the relay itself).
   */
  refuses(held: Iterable<PartitionEntry>, now: number): boolean {
    if (this.#starts.size >= this.#lanes) return true;
    const [oldest] = this.#starts;
    if (oldest === undefined || this.#starts.size < lanesNow(held, this.#lanes) || now >= oldest.at + this.#slowAfterMs) return false;
    this.#alarmAt = Math.min(this.#alarmAt, oldest.at + this.#slowAfterMs);
    return true;
  }

  /** When a read refused by the one-lane limit is to be made again (monotonic ms); +Infinity when none is. */
  get alarmAt(): number {
    return this.#alarmAt;
  }

  /** Whether the alarm's time has come; it is then cleared. */
  rang(now: number): boolean {
    if (now < this.#alarmAt) return false;
    this.#alarmAt = Number.POSITIVE_INFINITY;
    return true;
  }
}
