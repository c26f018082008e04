import { PublishError } from '../../src/core/errors.js';
import type { OutboxMessage } from '../../src/core/message.js';
import type { Publisher, PublisherCapabilities } from '../../src/core/ports.js';

/**
 * A broker stand-in for the relay's own unit tests (the broker publishers have their own tests against
 * the real brokers). It records what it "stored" and fails on demand.
 */
export class RecordingPublisher implements Publisher {
  readonly name = 'recording';
  readonly capabilities: PublisherCapabilities;
  readonly delivered: OutboxMessage[] = [];
  /** Return an error to fail this publish, or undefined to accept it. */
  failWith: (message: OutboxMessage) => Error | undefined = () => undefined;
  delayMs = 0;
  inFlight = 0;
  maxInFlight = 0;
  readonly inFlightKeys = new Set<string>();
  keyOverlap = false;
  #held: Promise<void> | undefined;
  #release: () => void = () => {};

  constructor(capabilities: PublisherCapabilities = {}) {
    this.capabilities = capabilities;
  }

  async publish(message: OutboxMessage): Promise<void> {
    if (message.key !== null) {
      if (this.inFlightKeys.has(message.key)) this.keyOverlap = true;
      this.inFlightKeys.add(message.key);
    }
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
      if (this.#held !== undefined) await this.#held;
      const error = this.failWith(message);
      if (error !== undefined) throw error;
      this.delivered.push(message);
    } finally {
      this.inFlight--;
      if (message.key !== null) this.inFlightKeys.delete(message.key);
    }
  }

  /** Publishes wait (unconfirmed, as with a stalled broker) until `releaseConfirms()`. */
  holdConfirms(): void {
    this.#held = new Promise((resolve) => {
      this.#release = resolve;
    });
  }

  releaseConfirms(): void {
    this.#held = undefined;
    this.#release();
  }

  async close(): Promise<void> {}
}

/** A failure of this message (e.g. a nack): it counts as an attempt and backs off. */
export const transientFailure = (id: string) => new PublishError('OUTBOXER_PUBLISH_FAILED', `broker nacked message ${id} (test)`);
/** The broker cannot be reached: an environmental fault that must not use up attempts. */
export const brokerDown = (id: string) => new PublishError('OUTBOXER_BROKER_UNAVAILABLE', `message ${id} was not sent: cannot connect (test)`);
