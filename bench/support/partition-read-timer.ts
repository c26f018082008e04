import type { PartitionLease } from '../../src/core/ports/relay-leases.js';
import type { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';

/** How long the bench's reader holds its partitions: longer than scenario (e) times reads on one table size. */
const READER_LEASE_MS = 600_000;

interface Held {
  readonly relayId: string;
  readonly partitionCount: number;
  readonly leases: readonly Pick<PartitionLease, 'partition' | 'epoch'>[];
}

/**
 * Scenario (e)'s "claim" under engine v2, which has none: one read of every partition from its start, timed. It
 * joins as a relay of its own and takes all partitions once (no other relay runs in that scenario), beats before
 * each read, untimed, so the lease never runs out, and writes no row: nothing to undo after a read.
 */
export function partitionReadTimer(store: PostgresOutboxStore): (limit: number) => Promise<{ claimed: number; ms: number }> {
  let held: Promise<Held> | undefined;
  const hold = async (): Promise<Held> => {
    const joined = await store.leases.join({ name: 'bench-reader', leaseMs: READER_LEASE_MS });
    const leases = await store.leases.acquire(joined.relayId, joined.config.partitionCount);
    return { relayId: joined.relayId, partitionCount: joined.config.partitionCount, leases };
  };
  return async (limit) => {
    held ??= hold();
    const { relayId, partitionCount, leases } = await held;
    await store.leases.heartbeat(relayId);
    const perPartition = Math.max(1, Math.ceil(limit / leases.length));
    const requests = leases.map(({ partition, epoch }) => ({ partition, epoch, after: null, recheck: null, limit: perPartition }));
    const started = performance.now();
    const read = await store.reader.read(relayId, partitionCount, requests);
    return { claimed: read.messages.length, ms: performance.now() - started };
  };
}
