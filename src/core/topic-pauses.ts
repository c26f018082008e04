/** A topic pause that began in this batch (reported once per episode) or a paused topic that published again. */
export type TopicEvent =
  | { readonly kind: 'paused'; readonly topic: string; readonly error: string; readonly retryInMs: number }
  | { readonly kind: 'resumed'; readonly topic: string; readonly pausedMs: number };

interface Pause {
  readonly since: number;
  until: number;
  delayMs: number;
  error: string;
}

/**
 * Topics whose destination is missing (no route, exchange or stream), as one relay saw them. A paused topic's
 * messages are held without a publish until the pause runs out; the next publish then probes: success ends
 * the episode, a failure pauses it again for twice as long (up to `maxMs`). Pure: the caller passes the
 * monotonic time. One entry per topic that was ever paused and never published again.
 */
export class TopicPauses {
  readonly #paused = new Map<string, Pause>();

  constructor(
    readonly baseMs: number,
    readonly maxMs: number,
  ) {}

  /** How long `topic`'s messages are still held, in ms; 0 when it is not paused or the pause ran out (probe now). */
  remainingMs(topic: string, now: number): number {
    const pause = this.#paused.get(topic);
    return pause === undefined ? 0 : Math.max(0, Math.ceil(pause.until - now));
  }

  /** Why `topic` is paused (the error of the publish that found its destination missing), if it is. */
  reason(topic: string): string | undefined {
    return this.#paused.get(topic)?.error;
  }

  /**
   * A publish of `topic` found its destination missing. Starts an episode (`started`), or after a failed probe
   * doubles the pause; a pause still running (another publish found it first) is left as it is.
   * Returns how long to hold the topic's messages from now.
   */
  pause(topic: string, error: string, now: number): { readonly delayMs: number; readonly started: boolean } {
    const current = this.#paused.get(topic);
    if (current === undefined) {
      const delayMs = Math.min(this.baseMs, this.maxMs);
      this.#paused.set(topic, { since: now, until: now + delayMs, delayMs, error });
      return { delayMs, started: true };
    }
    current.error = error;
    if (current.until > now) return { delayMs: Math.ceil(current.until - now), started: false };
    current.delayMs = Math.min(current.delayMs * 2, this.maxMs);
    current.until = now + current.delayMs;
    return { delayMs: current.delayMs, started: false };
  }

  /** A publish of `topic` was confirmed: ends its episode. Returns how long it was paused, or undefined if it was not. */
  resume(topic: string, now: number): number | undefined {
    const pause = this.#paused.get(topic);
    if (pause === undefined) return undefined;
    this.#paused.delete(topic);
    return Math.round(now - pause.since);
  }

  /** Topics in an episode now (held, or about to be probed), sorted. */
  topics(): string[] {
    return [...this.#paused.keys()].sort();
  }

  get size(): number {
    return this.#paused.size;
  }
}
