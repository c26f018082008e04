import type { BrokerConnectionState } from '../core/relay-health.js';

/**
 * A publisher's broker connection as it last saw it, for `Publisher.connectionState()` (read from memory):
 * - `connected` while a connection is up;
 * - `connecting` before the first connection (until an attempt fails), and during the first attempt after a
 *   loss;
 * - `disconnected` once closed, after a loss, and after a failed attempt until a connection is up again (the
 *   attempts that follow a failure keep it `disconnected`, so an outage does not flicker between the two and
 *   `/health/ready` stays 503 for its whole length).
 */
export class ConnectionStateTracker {
  #up = false;
  #attempting = false;
  /** A connection was lost or an attempt failed, and no connection has been up since. */
  #troubled = false;
  /** Attempts that failed since the last connection (or since the start). */
  #failed = 0;
  #closed = false;

  get state(): BrokerConnectionState {
    if (this.#closed) return 'disconnected';
    if (this.#up) return 'connected';
    if (this.#failed > 0) return 'disconnected';
    if (this.#attempting) return 'connecting';
    return this.#troubled ? 'disconnected' : 'connecting';
  }

  /** An attempt to connect starts; a new attempt while one runs means the previous one failed. */
  attempting(): void {
    if (this.#attempting) this.#failed++;
    this.#attempting = true;
  }

  connected(): void {
    this.#up = true;
    this.#attempting = false;
    this.#troubled = false;
    this.#failed = 0;
  }

  attemptFailed(): void {
    this.#attempting = false;
    this.#troubled = true;
    this.#failed++;
  }

  /** The connection that was up is gone (the client may already be reconnecting). */
  lost(): void {
    this.#up = false;
    this.#attempting = false;
    this.#troubled = true;
  }

  closed(): void {
    this.#closed = true;
    this.#up = false;
  }
}
