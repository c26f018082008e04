import type pg from 'pg';
import type { PostgresOutboxStore } from '../../src/stores/postgres/index.js';
import type { SentStatement } from './count-statements.js';
import { scansOf, type Counters } from './scan-counters.js';
import type { VariantRows } from './statement-variants.js';

/** The scans of each statement, per run, and the plans the connection's prepared statements used. */
export interface PerExecution extends VariantRows {
  readonly perExecution: Map<string, Counters[]>;
  readonly prepared: { statement: string; generic_plans: string; custom_plans: string }[];
}

/**
 * Each statement alone on `solo` (a pool of one connection) through `soloStore`, in BEGIN ... ROLLBACK: the read and
 * the completions 8 times each, as the relay runs them, then every other kind the relay `sent` once. It joins as a
 * relay and takes every partition; the caller leaves with the returned `relayId`.
 */
export async function scansPerExecution(
  solo: pg.Pool,
  soloStore: PostgresOutboxStore,
  schema: string,
  kinds: readonly [string, SentStatement][],
): Promise<PerExecution> {
  const joined = await soloStore.leases.join({ name: 'scan-attribution', leaseMs: 600_000 });
  const leases = await soloStore.leases.acquire(joined.relayId, 64);
  const partitionCount = joined.config.partitionCount;
  const perExecution = new Map<string, Counters[]>();
  const once = async (label: string, work: () => Promise<unknown>) => {
    perExecution.set(label, [...(perExecution.get(label) ?? []), await scansOf(solo, schema, work)]);
  };
  // a read of a backlog as the relay sends it: a lane's share of the partitions (backlogged, 500 rows split
  // among them) while the other partitions ride along at 16 rows each
  const lane = leases.slice(0, Math.ceil(leases.length / 3));
  const requests = leases.map((l, i) => ({
    partition: l.partition,
    epoch: l.epoch,
    after: null,
    recheck: null,
    limit: i < lane.length ? Math.ceil(500 / lane.length) : 16,
  }));
  let batch: { partition: number; epoch: string; ids: string[]; seqs: string[] }[] = [];
  let readRows = 0;
  for (let i = 0; i < 8; i++) {
    await once('read (64 partitions, 22 backlogged)', async () => {
      const read = await soloStore.reader.read(joined.relayId, partitionCount, requests);
      readRows = read.messages.length;
      if (i === 0) {
        const byPartition = new Map<number, { ids: string[]; seqs: string[] }>();
        for (const m of read.messages) {
          if (!lane.some((l) => l.partition === m.partition)) continue;
          const entry = byPartition.get(m.partition) ?? { ids: [], seqs: [] };
          entry.ids.push(m.id);
          entry.seqs.push(m.seq);
          byPartition.set(m.partition, entry);
        }
        batch = lane.map((l) => ({
          partition: l.partition,
          epoch: l.epoch,
          ids: byPartition.get(l.partition)?.ids ?? [],
          seqs: byPartition.get(l.partition)?.seqs ?? [],
        }));
      }
    });
  }
  const completed = batch.reduce((n, b) => n + b.ids.length, 0);
  // as the relay completes a batch (the seqs the read returned), and as it writes an unwritten outcome again (ids only)
  for (const [how, seqs] of [
    ['by seq', true],
    ['by id', false],
  ] as const) {
    for (let i = 0; i < 8; i++) {
      await once(`complete ${how} (${batch.length} partitions, ${completed} published)`, () =>
        soloStore.reader.complete(
          joined.relayId,
          batch.map((b) => ({ partition: b.partition, epoch: b.epoch, published: b.ids, ...(seqs ? { publishedSeqs: b.seqs } : {}), failed: [], held: [] })),
        ),
      );
    }
  }
  const prepared = (
    await solo.query(
      `SELECT left(regexp_replace(statement, '\\s+', ' ', 'g'), 60) AS statement, generic_plans, custom_plans FROM pg_prepared_statements WHERE name LIKE 'outboxer_%'`,
    )
  ).rows as { statement: string; generic_plans: string; custom_plans: string }[];
  // every other statement kind the relay sent, replayed with its first captured parameters
  const client = await solo.connect();
  try {
    for (const [kind, entry] of kinds) {
      if (kind === 'read' || kind.startsWith('complete') || /^(BEGIN|COMMIT|ROLLBACK|LISTEN|SET|RESET|SELECT 1)/.test(kind)) continue;
      try {
        perExecution.set(kind, [await scansOf(client, schema, () => client.query(entry.text, entry.samples[0] ?? []))]);
      } catch (error) {
        perExecution.set(kind, [new Map([[`error: ${(error as Error).message.slice(0, 60)}`, 1]])]);
      }
    }
  } finally {
    client.release();
  }
  return { schema, partitionCount, requests, laneLength: lane.length, readRows, batch, relayId: joined.relayId, perExecution, prepared };
}
