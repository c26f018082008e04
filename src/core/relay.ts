import { ConfigurationError } from './errors.js';
import { PartitionRelay, type StoreForPartitionRelay } from './partition-relay/partition-relay.js';
import type { OutboxSchema, Publisher, RelayStore } from './ports.js';
import type { RelayHealth } from './relay-health.js';
import type { RelayOptions, RelayOptionsInput } from './relay-options.js';
import { runStartChecks, type StartCheck } from './start-checks.js';

/**
 * What `Relay` needs from a store: housekeeping (`RelayStore`), the schema role's start check for `verify()`, and
 * the partition leases and reader (`store.leases`, `store.reader`), checked at construction.
 */
export type StoreForRelay = RelayStore & Pick<OutboxSchema, 'verify'> & Partial<Pick<StoreForPartitionRelay, 'leases' | 'reader'>>;

/**
 * Moves committed messages from a store to a publisher: leases partitions of the outbox table, reads them,
 * publishes with the broker's confirmation and writes each outcome fenced by the partition's epoch (a
 * `PartitionRelay`, docs/design.md "The v2 relay loop"). Any number of relays may share a store.
 */
export class Relay {
  readonly options: RelayOptions;
  readonly #relay: PartitionRelay;
  readonly #store: StoreForRelay;
  readonly #publisher: Publisher;

  constructor(store: StoreForRelay, publisher: Publisher, options: RelayOptionsInput = {}) {
    this.#relay = new PartitionRelay(partitionStore(store), publisher, options);
    this.#store = store;
    this.#publisher = publisher;
    this.options = this.#relay.options;
  }

  get running(): boolean {
    return this.#relay.running;
  }

  /** The partition relay this relay runs (its relay id and partitions, for operators and tests). */
  get partitionRelay(): PartitionRelay {
    return this.#relay;
  }

  /** The relay's state from memory: partitions, live relays, database and broker reachability (`RelayHealth`). */
  health(): RelayHealth {
    return this.#relay.health();
  }

  /**
   * The start checks, to await before `start()`: the store's schema is migrated (`store.verify`), and the
   * publisher reaches its broker and declares its topology (`publisher.verify`), side by side. Rejects with
   * the first misconfiguration no retry can mend (`isMisconfiguration`: `OUTBOXER_NOT_MIGRATED`,
   * `OUTBOXER_AUTH_FAILED`, `OUTBOXER_VHOST_REFUSED`, `OUTBOXER_WRONG_PROTOCOL`, ...), database first. A server
   * that is merely down is logged and let through: once started, the relay rides it out with backoff.
   */
  async verify(): Promise<void> {
    const checks: StartCheck[] = [];
    const database = this.#store.verify?.bind(this.#store);
    const broker = this.#publisher.verify?.bind(this.#publisher);
    if (database !== undefined) checks.push({ what: 'database', check: database });
    if (broker !== undefined) checks.push({ what: 'broker', check: broker });
    for (const [name, destination] of Object.entries(this.options.destinations)) {
      const check = destination.publisher.verify?.bind(destination.publisher);
      if (check !== undefined) checks.push({ what: `broker of destination ${name}`, check });
    }
    await runStartChecks(checks, this.options.logger);
  }

  /** Starts the loop in the background; `stop()` ends it. Calling it twice is a no-op. */
  start(): void {
    this.#relay.start();
  }

  /** Reads the held partitions now instead of at the next poll (e.g. right after a commit). */
  wake(): void {
    this.#relay.wake();
  }

  /**
   * Graceful stop: no new publish starts; publishes already sent wait for their confirmation (bounded by the
   * publish timeout) and their outcomes are written; then every partition is given back for another relay.
   */
  stop(): Promise<void> {
    return this.#relay.stop();
  }
}

function partitionStore(store: StoreForRelay): StoreForPartitionRelay {
  const { leases, reader } = store;
  if (leases === undefined || reader === undefined) {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_OPTION',
      'a relay needs a store with partition leases and a partition reader (store.leases and store.reader, as the PostgreSQL store has)',
      { options: ['engine'] },
    );
  }
  return { leases, reader, purgePublished: (n) => store.purgePublished(n), purgeIdempotencyKeys: (n) => store.purgeIdempotencyKeys(n) };
}
