import type { PartitionLease, PartitionMessage, PartitionReader, PartitioningConfig, RelayLeases } from '../../src/core/ports.js';

/** What a port-driven relay published: the message, who published it and under which partition count. */
export interface PortDelivery {
  readonly message: PartitionMessage;
  readonly relay: string;
  readonly partitionCount: number;
}

/**
 * A v2 relay reduced to what the ports promise, for tests of the store side while the real one is elsewhere:
 * each `step` beats, gives everything back while a resize waits, acquires up to `maxPartitions` when grants are
 * open, reads its partitions from their start (no positions: the tests' data is small), "publishes" each row
 * whose key waits for nothing into `deliveries` and completes it, fenced by its epochs.
 */
export class PortRelay {
  readonly deliveries: PortDelivery[];
  readonly grants: { readonly lease: PartitionLease; readonly generation: number }[] = [];
  relayId = '';
  config: PartitioningConfig | undefined;
  #held: PartitionLease[] = [];
  readonly #leases: RelayLeases;
  readonly #reader: PartitionReader;
  readonly #options: { readonly name: string; readonly leaseMs: number; readonly maxPartitions: number; readonly limit: number };

  constructor(
    store: { readonly leases: RelayLeases; readonly reader: PartitionReader },
    deliveries: PortDelivery[],
    options: { readonly name: string; readonly leaseMs?: number; readonly maxPartitions?: number; readonly limit?: number },
  ) {
    this.#leases = store.leases;
    this.#reader = store.reader;
    this.deliveries = deliveries;
    this.#options = { leaseMs: 60_000, maxPartitions: 1024, limit: 50, ...options };
  }

  get held(): readonly PartitionLease[] {
    return this.#held;
  }

  async join(): Promise<void> {
    this.relayId = (await this.#leases.join({ name: this.#options.name, leaseMs: this.#options.leaseMs })).relayId;
  }

  /** One round; returns how many rows it published. */
  async step(): Promise<number> {
    let membership = await this.#leases.heartbeat(this.relayId);
    if (!membership.alive) throw new Error(`${this.#options.name} lost its lease`);
    if (membership.config.resizeTo !== null) {
      await this.#leases.release(this.relayId, this.#held);
      this.#held = [];
      this.config = membership.config;
      return 0;
    }
    const room = this.#options.maxPartitions - this.#held.length;
    if (membership.config.grantsOpen && room > 0) {
      const granted = await this.#leases.acquire(this.relayId, room);
      if (granted.length > 0) {
        // the count is read after the grant, while holding: a resize cannot end under a held partition
        membership = await this.#leases.membership(this.relayId);
        for (const lease of granted) this.grants.push({ lease, generation: membership.config.generation });
        this.#held.push(...granted);
      }
    }
    this.config = membership.config;
    if (this.#held.length === 0) return 0;
    const count = membership.config.partitionCount;
    const requests = this.#held.map((l) => ({ partition: l.partition, epoch: l.epoch, after: null, recheck: null, limit: this.#options.limit }));
    const { messages } = await this.#reader.read(this.relayId, count, requests);
    const ready = messages.filter((m) => m.waitsFor === null);
    for (const message of ready) this.deliveries.push({ message, relay: this.#options.name, partitionCount: count });
    const completions = this.#held.map((l) => ({
      partition: l.partition,
      epoch: l.epoch,
      published: ready.filter((m) => m.partition === l.partition).map((m) => m.id),
      failed: [],
      held: [],
    }));
    const outcomes = await this.#reader.complete(
      this.relayId,
      completions.filter((c) => c.published.length > 0),
    );
    if (outcomes.some((o) => !o.applied)) throw new Error(`${this.#options.name}: a completion was fenced`);
    return ready.length;
  }

  /** Runs `step` until `stop()` says so; errors end the loop and come out of the returned promise. */
  async run(stop: () => boolean): Promise<void> {
    while (!stop()) {
      if ((await this.step()) === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async leave(): Promise<void> {
    if (this.relayId !== '') await this.#leases.leave(this.relayId);
  }
}
