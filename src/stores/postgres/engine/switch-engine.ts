import { z } from 'zod';
import { OutboxerError } from '../../../core/errors.js';
import type { PgDatabase, SqlExecutor } from '../database.js';
import { leaseTables } from '../leases/lease-tables.js';
import { fenceTriggersSql } from '../migration-engine-switch.js';
import type { TableName } from '../sql.js';
import { engineStateIn, liveHolders, outboxOf, readEngineState } from './engine-state.js';
import { lockOptions, positiveInt, resolveOperatorOptions } from './operator-options.js';
import { lockedTransaction, type LockPatience } from './locked-transaction.js';

const switchOptionsSchema = z.object({
  engine: z.enum(['v1', 'v2']),
  ...lockOptions,
  batchSize: positiveInt.max(100_000).default(10_000),
}).strict();

/** Progress of a switch, for printing: a lock wait that is retried, or a batch of the pending-row scan. */
export type SwitchProgress =
  | { readonly step: 'lock'; readonly attempt: number }
  | { readonly step: 'scan'; readonly scanned: number; readonly scheduled: number };

export type SwitchEngineOptions = z.input<typeof switchOptionsSchema> & {
  readonly onProgress?: ((progress: SwitchProgress) => void) | undefined;
};

export interface SwitchEngineResult {
  readonly engine: 'v1' | 'v2';
  /** False when the table was already at that engine (the call is idempotent). */
  readonly changed: boolean;
  /** Under v2: when grants open, i.e. the last lease of a v1 claim pending at the switch (or the switch itself). */
  readonly fenceUntil: Date | null;
  /** Pending rows the switch read, in batches. */
  readonly scanned: number;
  /** Of those, rows still claimed by a v1 relay: the fence waits for the last of their leases. */
  readonly leased: number;
  /** v1 backoffs (`available_at` ahead, no `due_at`) given `due_at = available_at`. */
  readonly scheduled: number;
}

/**
 * Switches an outbox table between relay engines (docs/upgrading-to-engine-v2.md). Idempotent, and safe to run
 * again after it was interrupted at any point.
 *
 * To v2, in three steps:
 * 1. One short transaction creates the fence triggers (its lock waits out every v1 claim and insert in flight,
 *    holding off new writers until it commits, retried under `lockTimeoutMs`) and sets `engine = 'v2'` with
 *    `fence_until = 'infinity'`: from its commit v1 claims get nothing, and no grant is possible yet.
 * 2. The pending rows are read in batches of `batchSize` by seq, each batch its own transaction (writers never
 *    wait): v1 backoffs get `due_at = available_at`, and the latest `lease_until` of rows a v1 relay still holds is
 *    kept. The cost is one pass over the pending rows through the pending index, and one row write per backoff.
 *    No new v1 lease or backoff can appear behind the scan: the triggers fence claims and schedule backoffs.
 * 3. `fence_until` becomes that latest lease (or now): no grant happens while a v1 relay may still publish what
 *    it claimed, and no pending row was touched but the backoffs, so none is lost.
 *
 * Back to v1: only while no v2 relay whose lease still runs holds a partition (`OUTBOXER_ENGINE_ROLLBACK_REFUSED`
 * otherwise). One transaction drops the triggers, locks grants out while it checks, frees every partition and sets
 * `engine = 'v1'`. What v2 wrote stays valid for v1, which ignores `due_at` (a v2 backoff is retried at once).
 */
export async function switchEngine(database: PgDatabase, name: TableName, input: SwitchEngineOptions): Promise<SwitchEngineResult> {
  const { onProgress, ...rest } = input;
  const options = resolveOperatorOptions(switchOptionsSchema, rest, 'switchEngine');
  const what = `switch of "${name.schema}"."${name.table}" to engine ${options.engine}`;
  const patience: LockPatience = { ...options, onRetry: (attempt) => onProgress?.({ step: 'lock', attempt }) };
  const state = await readEngineState(database, name);
  const unchanged = { engine: options.engine, changed: false, fenceUntil: state.fenceUntil, scanned: 0, leased: 0, scheduled: 0 };
  if (options.engine === 'v1') {
    if (state.engine === 'v1') return unchanged;
    await lockedTransaction(database, what, patience, (tx) => backToV1(tx, name));
    return { ...unchanged, changed: true, fenceUntil: null };
  }
  if (state.engine === 'v2' && !state.switching) return unchanged;
  if (state.engine === 'v1') await lockedTransaction(database, what, patience, (tx) => fence(tx, name));
  const scan = await scanPending(database, name, options.batchSize, onProgress);
  const fenced = await database.query(
    `UPDATE ${leaseTables(name).partitioning} SET fence_until = COALESCE($1::timestamptz, now())
    WHERE engine = 'v2' AND fence_until = 'infinity' RETURNING fence_until`,
    [scan.lastLease],
  );
  const fenceUntil = (fenced.rows[0] as { fence_until: Date | string } | undefined)?.fence_until;
  // none updated: another switch ended first, or a switch back came in between
  const after = fenceUntil === undefined ? await readEngineState(database, name) : undefined;
  return {
    engine: after?.engine ?? 'v2',
    changed: true,
    fenceUntil: fenceUntil === undefined ? (after?.fenceUntil ?? null) : new Date(fenceUntil),
    scanned: scan.scanned,
    leased: scan.leased,
    scheduled: scan.scheduled,
  };
}

async function fence(tx: SqlExecutor, name: TableName): Promise<void> {
  const state = await engineStateIn(tx, name, true);
  if (state.engine === 'v2') return;
  if (!state.fenced) await tx.query(fenceTriggersSql(name, 'create'));
  await tx.query(`UPDATE ${leaseTables(name).partitioning} SET engine = 'v2', fence_until = 'infinity'`);
}

async function backToV1(tx: SqlExecutor, name: TableName): Promise<void> {
  // First, so no fenced v1 claim (whose trigger writes the partitioning row) runs while that row is locked here:
  // a claim holding the outbox's lock and waiting for the row would deadlock with this drop waiting for the claim.
  await tx.query(fenceTriggersSql(name, 'drop'));
  const state = await engineStateIn(tx, name, true);
  if (state.engine === 'v1') return;
  const { partitions, partitioning } = leaseTables(name);
  // grants update partition rows: this waits for those in flight and holds off new ones until the commit
  await tx.query(`LOCK TABLE ${partitions} IN SHARE MODE`);
  const live = await liveHolders(tx, name);
  if (live.partitions > 0) {
    throw new OutboxerError(
      'OUTBOXER_ENGINE_ROLLBACK_REFUSED',
      `cannot switch "${name.schema}"."${name.table}" back to engine v1: ${live.relays} v2 relay(s) whose lease still runs hold ${live.partitions} partition(s) and may be publishing; stop every v2 relay (or wait until their leases run out), then run the switch again`,
    );
  }
  await tx.query(`UPDATE ${partitions} SET owner = NULL, state = 'free' WHERE owner IS NOT NULL`);
  await tx.query(`UPDATE ${partitioning} SET engine = 'v1', fence_until = '-infinity'`);
}

interface ScanTotals {
  scanned: number;
  leased: number;
  scheduled: number;
  /** The latest `lease_until` seen, as PostgreSQL prints it (with its offset), so no precision is lost. */
  lastLease: string | null;
}

/** A delay kept only in `available_at` (a v1 backoff, an older writer): `due_at` missing or behind it. */
const backoff = (row: string) => `${row}.available_at > clock_timestamp() AND (${row}.due_at IS NULL OR ${row}.due_at < ${row}.available_at)`;

async function scanPending(database: PgDatabase, name: TableName, batchSize: number, onProgress: SwitchEngineOptions['onProgress']): Promise<ScanTotals> {
  const t = outboxOf(name);
  const totals: ScanTotals = { scanned: 0, leased: 0, scheduled: 0, lastLease: null };
  let after = '0';
  for (;;) {
    const result = await database.query(
      `WITH batch AS MATERIALIZED (
        SELECT seq, lease_until, available_at, due_at FROM ${t} WHERE state = 'pending' AND seq > $1::int8 ORDER BY seq LIMIT $2::int
      ), scheduled AS (
        -- by primary key (a join with the batch would be planned as a scan of the whole table per batch)
        UPDATE ${t} o SET due_at = o.available_at
        WHERE o.seq = ANY (ARRAY(SELECT seq FROM batch WHERE ${backoff('batch')}))
          AND o.state = 'pending' AND ${backoff('o')}
        RETURNING o.seq
      )
      SELECT count(*)::int AS scanned, max(seq)::text AS last_seq, count(lease_until)::int AS leased,
        greatest(max(lease_until), $3::timestamptz)::text AS last_lease, (SELECT count(*)::int FROM scheduled) AS scheduled
      FROM batch`,
      [after, batchSize, totals.lastLease],
    );
    const row = result.rows[0] as { scanned: number; last_seq: string | null; leased: number; last_lease: string | null; scheduled: number };
    totals.scanned += row.scanned;
    totals.leased += row.leased;
    totals.scheduled += row.scheduled;
    totals.lastLease = row.last_lease;
    onProgress?.({ step: 'scan', scanned: totals.scanned, scheduled: totals.scheduled });
    if (row.last_seq === null || row.scanned < batchSize) return totals;
    after = row.last_seq;
  }
}
