/**
 * A bound on requests in flight per origin: `acquire` resolves with a release function once one of `limit`
 * slots is free, in arrival order, or rejects when `signal` aborts first. Origins with nothing in flight or
 * waiting are forgotten, so the map stays as small as the set of busy origins.
 */
export class OriginSlots {
  readonly #limit: number;
  readonly #origins = new Map<string, { inFlight: number; waiting: (() => void)[] }>();

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Requests in flight to `origin` now. */
  inFlight(origin: string): number {
    return this.#origins.get(origin)?.inFlight ?? 0;
  }

  acquire(origin: string, signal: AbortSignal): Promise<() => void> {
    let entry = this.#origins.get(origin);
    if (entry === undefined) {
      entry = { inFlight: 0, waiting: [] };
      this.#origins.set(origin, entry);
    }
    const slot = entry;
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      const next = slot.waiting.shift();
      if (next !== undefined) next();
      else if (--slot.inFlight === 0) this.#origins.delete(origin);
    };
    if (slot.inFlight < this.#limit) {
      slot.inFlight++;
      return Promise.resolve(release);
    }
    return new Promise((resolve, reject) => {
      const granted = (): void => {
        signal.removeEventListener('abort', aborted);
        resolve(release); // the slot passes straight from the releasing request to this one
      };
      const aborted = (): void => {
        const index = slot.waiting.indexOf(granted);
        if (index >= 0) slot.waiting.splice(index, 1);
        reject(signal.reason);
      };
      if (signal.aborted) return reject(signal.reason);
      slot.waiting.push(granted);
      signal.addEventListener('abort', aborted, { once: true });
    });
  }
}
