import type { ReaderStatement, ReaderTables } from './reader-tables.js';

type OutcomeArgs = [
  relayId: string,
  partitions: readonly number[],
  epochs: readonly string[],
  rowPartitions: readonly number[],
  ids: readonly string[],
  kinds: readonly ('published' | 'failed' | 'dead' | 'held')[],
  delays: readonly number[],
  errors: readonly (string | null)[],
  /** The seq a read returned with each id, or `null` to find the row by id alone. */
  seqs: readonly (string | null)[],
];

type PublishedArgs = [
  relayId: string,
  partitions: readonly number[],
  epochs: readonly string[],
  rowPartitions: readonly number[],
  seqs: readonly string[],
  ids: readonly string[],
];

/**
 * The partitions of `$2`/`$3` that name relay `$1` as owner at that epoch, share-locked until the statement commits,
 * with the table's partition count. The count cannot change while the partition row is locked: a resize replaces
 * every partition row under `FOR UPDATE`.
 *
 * Given the count the relay read with (`partitionCount` above 0), it is written into the text, and a partition is
 * locked only while the table has that count: each row is then found by `outboxer_partition(key, id, <count>)` as
 * the partition index spells it, one probe on both of the index's columns. Without it, the count is read once here
 * (an InitPlan) and is a column of every row that joins a locked partition (a join of the partitioning table next to
 * the outbox rows was scanned once per row in the generic plan, 0.95 sequential scans per message in a drain; a
 * column keeps `outboxer_partition` inlined, where a subquery argument would not). The index cannot serve a probe by
 * that partition, and the plan cached at a statement's sixth execution on a small table may probe by seq alone
 * through the partition index, a scan of the whole index per row (`postgres-plan-cache.test.ts`).
 */
const lockedPartitions = ({ partitions, partitioning }: ReaderTables, partitionCount: number, guard = '') => `SELECT p.partition, p.unclean,
        ${partitionCount > 0 ? `${partitionCount}` : `(SELECT partition_count FROM ${partitioning})`} AS partition_count
      FROM ${partitions} p
      JOIN unnest($2::int[], $3::int8[]) AS c(partition, epoch) ON p.partition = c.partition AND p.epoch = c.epoch
      WHERE p.owner = $1::uuid${partitionCount > 0 ? ` AND (SELECT partition_count FROM ${partitioning}) = ${partitionCount}` : ''}${guard}
      ORDER BY p.partition
      FOR SHARE OF p`;

/**
 * The partition count a probe by seq computes a row's partition with: the relay's, written into the text, or the column
 * `row.partition_count`. Probes by id always use the column: with the count in the text the partition index would
 * match them too, and a plan could walk a partition's rows instead of probing the unique index on id.
 */
const countIn = (partitionCount: number, row: string) => (partitionCount > 0 ? partitionCount : `${row}.partition_count`);

/**
 * One row of `sent` (alias `m`, with `m.id`, `m.partition` and `m.partition_count`) locked `FOR UPDATE SKIP LOCKED`,
 * if it is still pending and really in that partition; `lookup` names it (by seq, or by id). A `LATERAL` per row, so
 * that every plan probes an index once per row: a plain join was planned as a merge join that walks the pending
 * index from its start, through whatever is held there.
 */
const lockedRow = ({ outbox, partitionOf }: ReaderTables, count: string | number, lookup: string) => `CROSS JOIN LATERAL (
        SELECT o.ctid AS at FROM ${outbox} o
        WHERE ${lookup} AND o.state = 'pending' AND ${partitionOf('o', count)} = m.partition
        FOR UPDATE OF o SKIP LOCKED
      ) x`;

/**
 * The ids of `sent` rows that were not written though still pending and really in their partition: another session
 * holds them locked (so `FOR UPDATE SKIP LOCKED` passed them over), or one committed a change to them after this
 * statement's snapshot (the lock then holds a row version the snapshot does not see, so the write by `ctid` misses
 * it). Either way nothing was written, and the relay writes them again later, alone. `unwritten` is a hashed
 * `NOT IN`, so the probe runs only for those rows: the planner estimates a CTE at a few rows, and a semi- or
 * anti-join against one ran as a nested loop over both (34 ms for 600 rows instead of 6).
 */
const skippedRows = (
  { outbox, partitionOf }: ReaderTables,
  count: string | number,
  unwritten: string,
  lookup: string,
) => `SELECT m.partition, array_agg(m.id::text) AS ids FROM sent m
      WHERE ${unwritten}
        AND EXISTS (SELECT 1 FROM ${outbox} o WHERE ${lookup} AND o.state = 'pending' AND ${partitionOf('o', count)} = m.partition)
      GROUP BY m.partition`;

/**
 * Per requested partition in order: whether it was locked, its `unclean` count, what was written in it, and the ids
 * left unwritten (`skipped`, rows of `partition` and `ids`; absent when the statement skips none).
 */
const perPartition = (
  written: string,
  skipped?: string,
) => `SELECT r.partition, r.epoch::text AS epoch, l.partition IS NOT NULL AS applied, COALESCE(l.unclean, 0) AS unclean,
      COALESCE(w.published, 0)::int AS published, COALESCE(w.scheduled, 0)::int AS scheduled, ${skipped === undefined ? "'{}'::text[]" : "COALESCE(s.ids, '{}')"} AS skipped
    FROM unnest($2::int[], $3::int8[]) WITH ORDINALITY AS r(partition, epoch, ord)
    LEFT JOIN locked l ON l.partition = r.partition
    LEFT JOIN (${written}) w ON w.partition = r.partition
    ${skipped === undefined ? '' : `LEFT JOIN ${skipped} s ON s.partition = r.partition`}
    ORDER BY r.ord`;

const publishRows = (outbox: string, retain: boolean, only: string) =>
  retain
    ? `UPDATE ${outbox} o SET state = 'published', published_at = now(), due_at = NULL FROM mine m WHERE ${only}o.ctid = m.at`
    : `DELETE FROM ${outbox} o USING mine m WHERE ${only}o.ctid = m.at`;

/**
 * The usual completion: every partition of the call holds published rows only, each with the seq its read returned.
 * Per row one probe of an index on seq, whose row it locks, then one write by that row's `ctid`: the delete (or the
 * `published` mark when the store keeps them, `retain`). Fenced and skip-locked like `completeOutcomes`, which
 * writes every other completion.
 *
 * Plan seen on PostgreSQL 15 (100k rows, 506 published rows of 22 partitions, custom and generic alike): LockRows
 * over the partitions (a sequential scan of that 64-row table, the count as an InitPlan); Nested Loop over `sent` ->
 * LockRows -> Index Scan using <t>_pending_idx (Index Cond: seq = m.seq); Delete -> Nested Loop over `mine` -> Tid
 * Scan. The check for skipped rows runs only for rows not written (never in normal flow).
 */
function completePublished(retain: boolean): ReaderStatement<PublishedArgs> {
  return {
    sql: (tables, partitionCount) => `WITH locked AS MATERIALIZED (
      ${lockedPartitions(tables, partitionCount)}
    ), sent AS MATERIALIZED (
      SELECT m.partition, m.seq, m.id, l.partition_count
      FROM unnest($4::int[], $5::int8[], $6::uuid[]) AS m(partition, seq, id) JOIN locked l ON l.partition = m.partition
    ), mine AS MATERIALIZED (
      SELECT x.at, m.partition, m.seq FROM sent m ${lockedRow(tables, countIn(partitionCount, 'm'), 'o.seq = m.seq AND o.id = m.id')}
    ), published AS (
      ${publishRows(tables.outbox, retain, '')}
      RETURNING m.partition, m.seq
    ), skipped AS (
      ${skippedRows(tables, countIn(partitionCount, 'm'), 'm.seq NOT IN (SELECT seq FROM published)', 'o.seq = m.seq AND o.id = m.id')}
    )
    ${perPartition('SELECT partition, count(*) AS published, 0 AS scheduled FROM published GROUP BY partition', 'skipped')}`,
    params: (relayId, partitions, epochs, rowPartitions, seqs, ids) => [relayId, partitions, epochs, rowPartitions, seqs, ids],
  };
}

/**
 * Writes the outcomes of several partitions in one statement, each partition whole or not at all.
 *
 * Fencing: `locked` keeps the partitions whose row names me at my epoch and share-locks them, in partition
 * order. A grant (`FOR UPDATE SKIP LOCKED`) passes a locked partition over, and a release or reap waits for this
 * statement to commit; one that committed first changed the owner or epoch, which the lock re-checks on the
 * latest row version, so the partition drops out and none of its rows is written. Only the outcomes of locked
 * partitions are written (`sent`), only to rows still pending and really in that partition, and, where the
 * relay sent the row's seq, only when seq and id name the same row.
 *
 * Rows are locked `FOR UPDATE SKIP LOCKED` first (`mine`), by seq where it was sent (the primary key's order, one
 * probe) and by id otherwise: a row another session holds locked (an operator's transaction, a long migration)
 * is not waited for, which would stall every partition of the completion behind it; it is reported in `skipped`
 * (still pending, nothing written) and the relay writes it again later, alone. Each write then takes the locked
 * row by its `ctid`, without a second index probe.
 *
 * Published rows are deleted, or marked `published` when the store keeps them (`retain`). Failed rows count the
 * attempt and get `due_at` (their backoff: a scheduled row holds its key, see `read-partitions.ts`) or are parked
 * dead; held rows get `due_at` without an attempt. Returns, per requested partition in order, whether it was
 * locked and how many rows each kind of write changed.
 */
function completeOutcomes(retain: boolean): ReaderStatement<OutcomeArgs> {
  return {
    sql: (tables, partitionCount) => `WITH locked AS MATERIALIZED (
      ${lockedPartitions(tables, partitionCount)}
    ), sent AS MATERIALIZED (
      SELECT m.*, l.partition_count
      FROM unnest($4::int[], $5::uuid[], $6::text[], $7::int8[], $8::text[], $9::int8[]) WITH ORDINALITY AS m(partition, id, kind, delay_ms, error, seq, ord)
      JOIN locked l ON l.partition = m.partition
    ), mine AS MATERIALIZED (
      SELECT x.at, m.ord, m.partition, m.kind, m.delay_ms, m.error FROM sent m ${lockedRow(tables, countIn(partitionCount, 'm'), 'o.seq = m.seq AND o.id = m.id')}
      WHERE m.seq IS NOT NULL
      UNION ALL
      SELECT x.at, m.ord, m.partition, m.kind, m.delay_ms, m.error FROM sent m ${lockedRow(tables, 'm.partition_count', 'o.id = m.id')}
      WHERE m.seq IS NULL
    ), published AS (
      ${publishRows(tables.outbox, retain, "m.kind = 'published' AND ")}
      RETURNING m.partition, m.ord
    ), scheduled AS (
      UPDATE ${tables.outbox} o SET
        attempts = o.attempts + CASE WHEN m.kind = 'held' THEN 0 ELSE 1 END,
        last_error = CASE WHEN m.kind = 'held' THEN COALESCE(m.error, o.last_error) ELSE m.error END,
        state = CASE WHEN m.kind = 'dead' THEN 'dead' ELSE 'pending' END,
        dead_at = CASE WHEN m.kind = 'dead' THEN now() END,
        due_at = CASE WHEN m.kind = 'dead' THEN NULL ELSE now() + m.delay_ms * interval '1 millisecond' END
      FROM mine m
      WHERE m.kind <> 'published' AND o.ctid = m.at
      RETURNING m.partition, m.ord
    ), written AS (
      SELECT partition, ord, true AS published FROM published UNION ALL SELECT partition, ord, false FROM scheduled
    ), skipped AS (
      ${skippedRows(tables, 'm.partition_count', 'm.ord NOT IN (SELECT ord FROM written)', 'o.id = m.id AND (m.seq IS NULL OR o.seq = m.seq)')}
    )
    ${perPartition('SELECT partition, count(*) FILTER (WHERE published) AS published, count(*) FILTER (WHERE NOT published) AS scheduled FROM written GROUP BY partition', 'skipped')}`,
    params: (relayId, partitions, epochs, rowPartitions, ids, kinds, delays, errors, seqs) => [
      relayId,
      partitions,
      epochs,
      rowPartitions,
      ids,
      kinds,
      delays,
      errors,
      seqs,
    ],
  };
}

/** How long `completePublishedDirect` waits for a lock before it gives up with `55P03` (lock_not_available), in ms. */
export const DIRECT_LOCK_WAIT_MS = 50;

/**
 * The usual completion written directly: each published row is deleted (or marked, `retain`) by its seq, with no row
 * lock taken first. Locking every row `FOR UPDATE SKIP LOCKED` and then writing it, as `completePublished` does, writes
 * each row twice (two WAL records) and costs PostgreSQL about twice the CPU per message; a row some other session holds
 * locked is rare (an operator's transaction), so it is the fallback, not the rule.
 *
 * The statement sets `lock_timeout` for its own implicit transaction (`set_config(..., true)`, in an InitPlan of
 * `locked` that runs before the first row lock is asked for: every write joins a locked partition row). A row lock that is
 * not granted within `DIRECT_LOCK_WAIT_MS` ends the statement with `55P03` and nothing written, and the reader runs
 * `completePublished` instead, which skips that row. Fencing, the partition check and the seq-and-id match are the
 * same as there; a row another session changed and committed after the statement's snapshot is re-checked on its
 * latest version (PostgreSQL's read committed re-check) and written only if it still matches.
 *
 * Plan seen on PostgreSQL 15 (100k rows, 506 published rows of 22 partitions, custom and generic alike): LockRows over
 * the partitions; Delete -> Nested Loop (Hash Join of `sent` and `locked`) -> Index Scan using <t>_pending_idx
 * (Index Cond: seq = m.seq; Filter: state, id), the partition check as the join filter.
 */
function completePublishedDirect(retain: boolean): ReaderStatement<PublishedArgs> {
  const write = (outbox: string, partitionOf: ReaderTables['partitionOf'], partitionCount: number) => {
    const match = `o.seq = m.seq AND o.id = m.id AND o.state = 'pending' AND ${partitionOf('o', countIn(partitionCount, 'l'))} = m.partition`;
    const sent = 'unnest($4::int[], $5::int8[], $6::uuid[]) AS m(partition, seq, id) JOIN locked l ON l.partition = m.partition';
    return retain
      ? `UPDATE ${outbox} o SET state = 'published', published_at = now(), due_at = NULL FROM ${sent} WHERE ${match}`
      : `DELETE FROM ${outbox} o USING ${sent} WHERE ${match}`;
  };
  return {
    sql: (tables, partitionCount) => `WITH locked AS MATERIALIZED (
      ${lockedPartitions(tables, partitionCount, ` AND (SELECT set_config('lock_timeout', '${DIRECT_LOCK_WAIT_MS}ms', true)) IS NOT NULL`)}
    ), published AS (
      ${write(tables.outbox, tables.partitionOf, partitionCount)}
      RETURNING m.partition
    )
    ${perPartition('SELECT partition, count(*) AS published, 0 AS scheduled FROM published GROUP BY partition')}`,
    params: (relayId, partitions, epochs, rowPartitions, seqs, ids) => [relayId, partitions, epochs, rowPartitions, seqs, ids],
  };
}

export const completePublishedDirectDeleting = completePublishedDirect(false);
export const completePublishedDirectRetaining = completePublishedDirect(true);
export const completePublishedDeleting = completePublished(false);
export const completePublishedRetaining = completePublished(true);
export const completeDeleting = completeOutcomes(false);
export const completeRetaining = completeOutcomes(true);
