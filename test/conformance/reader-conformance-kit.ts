import { afterEach } from 'vitest';
import type { PartitionLease, PartitionMessage, PartitionReadRequest, PartitionReadResult } from '../../src/core/ports.js';
import type { ReaderEnvironment, ReaderHarness } from './reader-harness.js';

/** What the reader suites share: the partition count they lease, requests, and a relay that owns every partition. */
export const P = 64;
export const LEASE_MS = 60_000;
export const seqs = (messages: readonly PartitionMessage[]) => messages.map((m) => m.seq);
export const bySeq = (a: string, b: string) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
export const fresh = (partition: number, epoch: string, limit = 1000, after: string | null = null): PartitionReadRequest => ({
  partition,
  epoch,
  after,
  recheck: null,
  limit,
});
/** Published messages as the relay completes them: their ids, and the seqs the read returned with them. */
export const publishing = (messages: readonly PartitionMessage[]) => ({ published: messages.map((m) => m.id), publishedSeqs: messages.map((m) => m.seq) });

/** A relay that owns every partition, as after a grant on a table switched to engine v2. */
export interface Owner {
  readonly id: string;
  readonly leases: readonly PartitionLease[];
  epoch(partition: number): string;
  /** Reads every partition it owns from the start. */
  readAll(limit?: number): Promise<PartitionReadResult>;
}

/**
 * A suite's environment per test (cleaned up after each): `setup` switches the table to engine v2, `owner` joins a
 * relay that leases every partition, `enqueueAndFind` returns messages as a read of every partition finds them.
 * Call inside a `describe`.
 */
export function readerSuite(harness: ReaderHarness) {
  let env: ReaderEnvironment | undefined;
  const setup = async (options?: { retainPublishedMs?: number }) => {
    env = await harness.setup(options);
    await env.leaseControls.configure({});
    return env;
  };
  const owner = async (e: ReaderEnvironment, name = 'a'): Promise<Owner> => {
    const { relayId: id } = await e.leases.join({ name, leaseMs: LEASE_MS });
    const leases = await e.leases.acquire(id, P);
    const epoch = (partition: number) => leases.find((l) => l.partition === partition)?.epoch ?? 'none';
    const readAll = (limit?: number) =>
      e.reader.read(
        id,
        P,
        leases.map((l) => fresh(l.partition, l.epoch, limit)),
      );
    return { id, leases, epoch, readAll };
  };
  const enqueueAndFind = async (e: ReaderEnvironment, relay: Owner, messages: Parameters<ReaderEnvironment['enqueue']>[0]) => {
    await e.enqueue(messages);
    const ids = new Set(messages.map((m) => m.id));
    return (await relay.readAll()).messages.filter((m) => ids.has(m.id));
  };
  afterEach(async () => {
    await env?.cleanup();
    env = undefined;
  });
  return { setup, owner, enqueueAndFind };
}
