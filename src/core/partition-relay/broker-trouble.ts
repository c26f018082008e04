import type { BrokerConnectionState } from '../relay-health.js';

/**
 * Whether this relay can publish, as it tells the group with its beats (docs/design/lease-protocol.md, "Hand-over and broker
 * trouble"). In trouble: from the start while its first connection attempts fail (`disconnected` before any
 * `connected`), and once the broker was unreachable for `afterMs` without a success in between: the publisher not
 * connected, or every publish finding it unavailable. Out of trouble: when the publisher is connected again, or a
 * publish or probe reached the broker; a publisher that cannot say is trusted again `afterMs` after the trouble
 * began, and after twice, four and eight times as long in the episodes that follow without a success.
 */
export class BrokerTrouble {
  readonly #afterMs: number;
  readonly #connection: () => BrokerConnectionState | 'unknown';
  #everConnected = false;
  /** Since when (monotonic ms) the broker has been unreachable without a success; undefined while it is fine. */
  #unreachableSince: number | undefined;
  #lastError = 'the publisher has not connected yet';
  #troubleSince: number | undefined;
  /** Trouble episodes since the broker last confirmed a publish or a probe: the re-trust of a publisher that cannot say waits longer each time. */
  #episodes = 0;

  constructor(afterMs: number, connection: () => BrokerConnectionState | 'unknown') {
    this.#afterMs = afterMs;
    this.#connection = connection;
  }

  /** A publish found the broker unavailable. */
  unavailable(error: string, now: number): void {
    this.#lastError = error;
    this.#unreachableSince ??= now;
  }

  /** The broker confirmed a publish, or a probe (`verify`) reached it. */
  reachable(): void {
    this.#everConnected = true;
    this.#unreachableSince = undefined;
    this.#troubleSince = undefined;
    this.#episodes = 0;
  }

  /** Whether the relay reported trouble the last time it asked (for probes while in trouble). */
  get troubled(): boolean {
    return this.#troubleSince !== undefined;
  }

  /** The reason to report now, or `null` when the relay can publish. */
  reason(now: number): string | null {
    const state = this.#connection();
    if (state === 'connected') {
      this.#everConnected = true;
      if (this.#troubleSince === undefined) return null;
      // connected again: a publish failure after this starts a new episode
      this.#unreachableSince = undefined;
      this.#troubleSince = undefined;
      return null;
    }
    // before its first connection, a publisher that connects on its first publish says `connecting`: not trouble
    if (state === 'disconnected' && !this.#everConnected)
      return this.#enter(now, `its broker has not been reachable since the relay started (${this.#lastError})`);
    if (state !== 'unknown' && this.#everConnected) this.#unreachableSince ??= now;
    if (this.#unreachableSince === undefined) return null;
    if (this.#troubleSince !== undefined) {
      // a publisher that cannot say is given another chance once the trouble has lasted as long again, then
      // twice as long, up to 8 times (a probe that reaches the broker ends the trouble before that)
      if (state === 'unknown' && now - this.#troubleSince >= this.#afterMs * 2 ** Math.min(3, this.#episodes - 1)) {
        this.#unreachableSince = undefined;
        this.#troubleSince = undefined;
        return null;
      }
      return this.#describe(now);
    }
    return now - this.#unreachableSince >= this.#afterMs ? this.#enter(now) : null;
  }

  #enter(now: number, reason?: string): string {
    if (this.#troubleSince === undefined) this.#episodes++;
    this.#troubleSince ??= now;
    this.#unreachableSince ??= now;
    return reason ?? this.#describe(now);
  }

  #describe(now: number): string {
    const seconds = Math.round((now - (this.#unreachableSince ?? now)) / 1000);
    return `its broker has been unreachable for ${seconds} s (${this.#lastError}); its partitions go to relays that can publish`;
  }
}
