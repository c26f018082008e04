import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { OutboxerError } from '../../../core/errors.js';
import type { ResizeCancellation, ResizeProgress, ResizeResult } from '../../../core/ports/partition-engine.js';
import { buildIndexes } from '../concurrent-indexes.js';
import type { PgDatabase, SqlExecutor } from '../database.js';
import { leaseTables } from '../leases/lease-tables.js';
import { partitionIndexes } from '../migration-read-path.js';
import type { TableName } from '../sql.js';
import type { EngineState } from '../../../core/ports/partition-engine.js';
import { engineStateIn, liveHolders, readEngineState } from './engine-state.js';
import { lockOptions, positiveInt, resolveOperatorOptions } from './operator-options.js';
import { lockedTransaction } from './locked-transaction.js';
import { dropStalePartitionIndexes } from './stale-partition-indexes.js';

const resizeOptionsSchema = z
  .object({
    partitions: z.number().int().min(1).max(1024),
    waitTimeoutMs: positiveInt.default(300_000),
    pollMs: positiveInt.max(60_000).default(500),
    ...lockOptions,
  })
  .strict();

export type ResizeOptions = z.input<typeof resizeOptionsSchema> & {
  readonly onProgress?: ((progress: ResizeProgress) => void) | undefined;
};

const inProgress = (name: TableName, to: number, asked: number) =>
  new OutboxerError(
    'OUTBOXER_RESIZE_IN_PROGRESS',
    `"${name.schema}"."${name.table}" has a resize to ${to} partitions waiting, not to ${asked}: run the resize to ${to} again to finish it, or cancel it (cancelResize), then resize to ${asked}`,
  );

/**
 * Changes the partition count (`outboxer migrate --partitions N`; docs/resizing-partitions.md). Resumable: a
 * resize to the same count finishes one whose process ended; `cancelResize` abandons it instead.
 * 1. Builds `<t>_p<N>_idx` and `<t>_p<N>_due_idx` `CONCURRENTLY` (writers and relays go on; an INVALID leftover is
 *    rebuilt).
 * 2. Sets `resize_to = N`: grants close, and relays drain and release everything (`PartitioningConfig.resizeTo`).
 * 3. Waits, polling every `pollMs` up to `waitTimeoutMs` (`OUTBOXER_RESIZE_TIMEOUT`, the resize left waiting),
 *    until no relay whose lease still runs holds a partition. A holder whose lease ran out stopped publishing.
 * 4. In one transaction that locks every partition row (so no grant, completion or release is in flight) and
 *    finds no live holder: replaces the rows with `N` free ones of generation `g + 1` (each epoch starting at the
 *    highest old one, so no epoch ever repeats), sets `partition_count = N` and clears `resize_to`.
 * 5. Drops the indexes of other counts `CONCURRENTLY`.
 * Writers never wait; the partition is computed from the row, so every row maps to one partition in each generation.
 */
export async function resizePartitions(database: PgDatabase, name: TableName, input: ResizeOptions): Promise<ResizeResult> {
  const { onProgress, ...rest } = input;
  const options = resolveOperatorOptions(resizeOptionsSchema, rest, 'resizePartitions');
  const to = options.partitions;
  const state = await readEngineState(database, name);
  if (state.resizeTo !== null && state.resizeTo !== to) throw inProgress(name, state.resizeTo, to);
  if (state.resizeTo === null && state.partitionCount === to) {
    const droppedIndexes = await dropStalePartitionIndexes(database, name, to);
    return { from: to, to, generation: state.generation, changed: false, resumed: false, droppedIndexes };
  }
  onProgress?.({ step: 'indexes', partitions: to });
  await buildIndexes(database, name, partitionIndexes(name, String(to)));
  const { partitioning } = leaseTables(name);
  // not when a resize to the same count (another process) ended since the state was read
  await database.query(`UPDATE ${partitioning} SET resize_to = $1::int WHERE resize_to IS NULL AND partition_count <> $1::int`, [to]);
  const started = performance.now();
  const what = `resize of "${name.schema}"."${name.table}" to ${to} partitions`;
  for (;;) {
    const finishedElsewhere = stillWaiting(await engineStateIn(database, name), name, to);
    let live = await liveHolders(database, name);
    if (finishedElsewhere !== null || live.partitions === 0) {
      const generation = finishedElsewhere ?? (await lockedTransaction(database, what, options, (tx) => moveToNextGeneration(tx, name, to)));
      if (generation !== null) {
        onProgress?.({ step: 'switched', partitions: to, generation });
        const droppedIndexes = await dropStalePartitionIndexes(database, name, to);
        onProgress?.({ step: 'dropped', indexes: droppedIndexes });
        return { from: state.partitionCount, to, generation, changed: true, resumed: state.resizeTo === to, droppedIndexes };
      }
      // a grant that read the config before resize_to was set committed since: it is given back like the others
      live = await liveHolders(database, name);
    }
    const waitedMs = Math.round(performance.now() - started);
    if (waitedMs >= options.waitTimeoutMs) {
      throw new OutboxerError(
        'OUTBOXER_RESIZE_TIMEOUT',
        `${what}: ${live.relays} relay(s) still hold ${live.partitions} partition(s) after ${waitedMs} ms; the resize stays waiting (grants closed): run it again to go on waiting, or cancel it (cancelResize); a relay that keeps its partitions while resizeTo is set is older than this resize needs`,
      );
    }
    onProgress?.({ step: 'waiting', relays: live.relays, held: live.partitions, waitedMs });
    await sleep(options.pollMs);
  }
}

/**
 * Null while the resize to `to` still waits; the generation when another process (a second resize to the same
 * count) finished it. Throws when it was cancelled, or replaced by a resize to another count.
 */
function stillWaiting(state: EngineState, name: TableName, to: number): number | null {
  if (state.resizeTo === to) return null;
  if (state.resizeTo !== null) throw inProgress(name, state.resizeTo, to);
  if (state.partitionCount === to) return state.generation;
  throw new OutboxerError(
    'OUTBOXER_RESIZE_CANCELLED',
    `the resize of "${name.schema}"."${name.table}" to ${to} partitions was cancelled while it waited; the count stays ${state.partitionCount}`,
  );
}

/** The switch to generation g + 1; null when a live relay still holds a partition (the caller waits again). */
async function moveToNextGeneration(tx: SqlExecutor, name: TableName, to: number): Promise<number | null> {
  const { partitions, partitioning } = leaseTables(name);
  const state = await engineStateIn(tx, name, true);
  const finishedElsewhere = stillWaiting(state, name, to);
  if (finishedElsewhere !== null) return finishedElsewhere;
  const locked = await tx.query(
    `WITH l AS (SELECT epoch FROM ${partitions} ORDER BY partition FOR UPDATE) SELECT COALESCE(max(epoch), 0)::text AS epoch FROM l`,
  );
  if ((await liveHolders(tx, name)).partitions > 0) return null;
  const epoch = (locked.rows[0] as { epoch: string }).epoch;
  const generation = state.generation + 1;
  await tx.query(`DELETE FROM ${partitions}`);
  await tx.query(`INSERT INTO ${partitions} (partition, generation, epoch) SELECT p, $1::int, $2::int8 FROM generate_series(0, $3::int - 1) AS p`, [
    generation,
    epoch,
    to,
  ]);
  await tx.query(`UPDATE ${partitioning} SET partition_count = $1::int, generation = $2::int, resize_to = NULL`, [to, generation]);
  return generation;
}

/**
 * Abandons a waiting resize: clears `resize_to` (grants open again at the current count) and drops the indexes
 * it had built. Returns the count it was moving to, or null when none was waiting.
 */
export async function cancelResize(database: PgDatabase, name: TableName): Promise<ResizeCancellation> {
  const state = await readEngineState(database, name);
  const result = await database.query(
    `UPDATE ${leaseTables(name).partitioning} c SET resize_to = NULL FROM (SELECT resize_to FROM ${leaseTables(name).partitioning} FOR UPDATE) old
    WHERE c.resize_to IS NOT NULL RETURNING old.resize_to`,
  );
  const cancelled = (result.rows[0] as { resize_to: number } | undefined)?.resize_to ?? null;
  return { cancelled, droppedIndexes: await dropStalePartitionIndexes(database, name, state.partitionCount) };
}
