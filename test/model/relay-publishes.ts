import type { OutboxRow } from './lease-database.js';
import type { ModelRelay } from './model-relay.js';
import type { Publish, RelayWorld } from './relay-world.js';

/**
 * The publishes a relay has on the wire, as its broker client runs them on the relay's clock: written at a drawn
 * moment, ended by a confirm or the timeout. One outlives its partition's memory when the relay drops it (the socket
 * does not care).
 */
export class RelayPublishes {
  private readonly onWire = new Set<Publish>();

  constructor(
    private readonly relay: ModelRelay,
    private readonly world: RelayWorld,
  ) {}

  /** Starts publishing `row`: mostly confirmed within 30 ms, one in ten later, every one at the timeout while the broker is slow. */
  start(partition: number, row: OutboxRow, timeout: number, slow: boolean): Publish {
    const { local } = this.relay;
    const duration = slow ? timeout : 1 + (this.world.random() < 0.1 ? this.world.random() * (timeout - 1) : this.world.random() * 30);
    const publish: Publish = {
      relay: this.relay,
      holder: this.relay.id,
      partition,
      row,
      start: this.world.realNow,
      end: null,
      frozen: false,
      transmitted: false,
      transmitLocal: local + this.world.random() * duration,
      endLocal: local + duration,
    };
    this.onWire.add(publish);
    this.world.publishStarted(publish);
    return publish;
  }

  /** After a pause: a publish the pause froze before its socket write writes now. */
  resume(): void {
    for (const publish of this.onWire) if (publish.frozen && !publish.transmitted) this.transmit(publish);
  }

  /** Writes the publishes due by the relay's clock and ends those whose confirm or timeout came; `ended` hears of each. */
  progress(ended: (publish: Publish) => void): void {
    for (const publish of this.onWire) {
      if (!publish.transmitted && this.relay.local >= publish.transmitLocal) this.transmit(publish);
      if (this.relay.local < publish.endLocal) continue;
      this.end(publish);
      this.onWire.delete(publish);
      ended(publish);
    }
  }

  kill(): void {
    for (const publish of this.onWire) this.end(publish);
  }

  /** SIGSTOP: a publish already written only awaits its confirm; one not yet written goes out on resume. */
  pause(): void {
    for (const publish of this.onWire) {
      if (publish.transmitted) this.end(publish);
      else publish.frozen = true;
    }
  }

  private end(publish: Publish): void {
    if (publish.end === null) this.world.publishEnded(publish);
  }

  private transmit(publish: Publish): void {
    publish.transmitted = true;
    this.world.transmit(publish);
  }
}
