import type { PartitionMessage, PartitionReader, Publisher } from '../../src/core/ports.js';
import { Relay, type StoreForRelay } from '../../src/core/relay.js';
import type { RelayOptionsInput } from '../../src/core/relay-options.js';
import type { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { afterEach } from 'vitest';
import { createPostgresFixture, type PostgresFixture } from './postgres-fixture.js';

/** Short leases so that takeovers happen within seconds: lease 3 s (beats every 1 s), publish timeout 1 s. */
export const v2Timing = {
  engine: 'v2',
  leaseMs: 3000,
  publishTimeoutMs: 1000,
  pollIntervalMs: 20,
  maxPollIntervalMs: 100,
  errorBackoffMs: 20,
  maxErrorBackoffMs: 200,
} as const;

/** How many partitions each live relay holds, by relay id. */
export async function holdings(fixture: PostgresFixture): Promise<Map<string, number>> {
  const rows = await fixture.pool.query<{ owner: string; n: number }>(
    `SELECT owner::text AS owner, count(*)::int AS n FROM "${fixture.schema}".outbox_partitions WHERE owner IS NOT NULL GROUP BY owner`,
  );
  return new Map(rows.rows.map((row) => [row.owner, row.n]));
}

/**
 * A store whose partition statements can be frozen, as a process that stops answering (killed, or paused):
 * once `freeze()` is called every lease and reader statement waits forever. `gateCompletions()` holds
 * completions only, until `openGate()`, as a relay paused between its publish and its completion.
 */
export class FreezableStore {
  frozen = false;
  #gate: Promise<void> | undefined;
  #open: () => void = () => undefined;
  /** Heartbeats executed by the database come back this much later (a congested network or event loop). */
  slowBeatsMs = 0;
  /** This many completions commit and then fail on their way back, as a connection that drops after COMMIT. */
  repliesLostAfterCommit = 0;
  /** Completions that reached the gate while it was closed. */
  gated = 0;
  readonly store: StoreForRelay;

  constructor(inner: PostgresOutboxStore) {
    const hang = () => new Promise<never>(() => undefined);
    const wrap = <T extends object>(target: T): T =>
      new Proxy(target, {
        get: (object, property) => {
          const value: unknown = Reflect.get(object, property);
          if (typeof value !== 'function') return value;
          return (...args: unknown[]) => (this.frozen ? hang() : (value as (...a: unknown[]) => unknown).apply(object, args));
        },
      });
    const reader = wrap(inner.reader);
    const leases = wrap(inner.leases);
    this.store = {
      leases: Object.assign(Object.create(leases) as typeof leases, {
        heartbeat: async (...args: Parameters<typeof leases.heartbeat>) => {
          const reply = await leases.heartbeat(...args);
          if (this.slowBeatsMs > 0) await new Promise((resolve) => setTimeout(resolve, this.slowBeatsMs));
          return reply;
        },
      }),
      reader: {
        read: (...args) => reader.read(...args),
        countAttempt: (...args) => reader.countAttempt(...args),
        complete: async (...args) => {
          if (this.#gate !== undefined) {
            this.gated++;
            await this.#gate;
          }
          const outcomes = await reader.complete(...args);
          if (this.repliesLostAfterCommit > 0) {
            this.repliesLostAfterCommit--;
            throw new Error('the connection dropped after the completion committed (test)');
          }
          return outcomes;
        },
      },
      purgePublished: (n) => inner.purgePublished(n),
      purgeIdempotencyKeys: (n) => inner.purgeIdempotencyKeys(n),
    };
  }

  freeze(): void {
    this.frozen = true;
  }

  gateCompletions(): void {
    this.#gate = new Promise((resolve) => (this.#open = resolve));
  }

  openGate(): void {
    this.#gate = undefined;
    this.#open();
  }
}

/** Relays made by a test, stopped after it (a frozen one gives up on its `leave` after its statement bound). */
export function relayPool(): {
  make(store: StoreForRelay, publisher: Publisher, options?: RelayOptionsInput): Relay;
  stopAll(): Promise<void>;
} {
  const made: Relay[] = [];
  return {
    make(store, publisher, options = {}) {
      const relay = new Relay(store, publisher, { ...v2Timing, ...options });
      made.push(relay);
      relay.start();
      return relay;
    },
    async stopAll() {
      await Promise.all(made.splice(0).map((relay) => relay.stop()));
    },
  };
}

/**
 * A test's fresh PostgreSQL fixture (engine v2, as `migrate` creates it), and the relays it starts: `afterEach`
 * stops the relays, then drops the fixture. Call once per `describe`.
 */
export function v2RelayScope(): { readonly relays: Relay[]; open(): Promise<PostgresFixture> } {
  const relays: Relay[] = [];
  let fixture: PostgresFixture | undefined;
  afterEach(async () => {
    await Promise.all(relays.splice(0).map((relay) => relay.stop()));
    await fixture?.cleanup();
    fixture = undefined;
  });
  return {
    relays,
    async open() {
      fixture = await createPostgresFixture();
      return fixture;
    },
  };
}

/**
 * The pending rows a read of every partition from its start returns, in seq order: what a relay of this version
 * sees of them (a read writes nothing, so no lease is needed to look).
 */
export async function readFromStart(reader: PartitionReader, partitionCount = 64, limit = 100): Promise<PartitionMessage[]> {
  const all = Array.from({ length: partitionCount }, (_, partition) => ({ partition, epoch: '0', after: null, recheck: null, limit }));
  const { messages } = await reader.read('00000000-0000-4000-8000-000000000000', partitionCount, all);
  return [...messages].sort((a, b) => Number(BigInt(a.seq) - BigInt(b.seq)));
}
