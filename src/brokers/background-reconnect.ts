/** Background reconnects start this long after a failed attempt or a loss, then double up to the max. */
export const RECONNECT_FIRST_MS = 1000;
export const RECONNECT_MAX_MS = 30_000;

/**
 * Reconnects an idle publisher without waiting for a publish, so that its `connectionState()` (and with it an
 * idle relay's `/health/ready`) says when the broker is reachable again, also when the very first attempt failed.
 * At most one timer, unref'd; the delay doubles on each background attempt and starts over once a connection is
 * up, so failures reported from several places never shorten it.
 */
export class BackgroundReconnect {
  readonly #attempt: () => void;
  #delayMs = RECONNECT_FIRST_MS;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  /** `attempt` starts (or joins) a connection attempt; its failure must call `schedule()` again. */
  constructor(attempt: () => void) {
    this.#attempt = attempt;
  }

  /** After a failed attempt or a lost connection: try again later, unless a retry is already due or stopped. */
  schedule(): void {
    if (this.#stopped || this.#timer !== undefined) return;
    const delayMs = this.#delayMs;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#stopped) return;
      this.#delayMs = Math.min(delayMs * 2, RECONNECT_MAX_MS);
      this.#attempt();
    }, delayMs);
    this.#timer.unref();
  }

  /** A connection is up: no retry is due, and the next outage starts again from the first delay. */
  connected(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#delayMs = RECONNECT_FIRST_MS;
  }

  /** For good (the publisher closes): the pending retry is cancelled and none is scheduled again. */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
