import { MAX_TAKE } from '../../../core/ports.js';
import type { ReaderStatement } from './reader-tables.js';

type ReadArgs = [
  partitions: readonly number[],
  after: readonly (string | null)[],
  recheckFrom: readonly (string | null)[],
  recheckTo: readonly (string | null)[],
  recheckTag: readonly (string | null)[],
  /** Per partition, the most rows each branch takes (at most `MAX_TAKE`). */
  takes: readonly number[],
  /** The due branch per destination, these only (`default`: rows without one); absent: one branch over all. */
  dueDestinations: readonly string[] | undefined,
];

/**
 * Reads every requested partition in one statement and writes nothing. Per partition (`req`, one row each):
 * - `fresh`: pending rows above the position, not scheduled, in seq order;
 * - `recheck`: the same in `(from, to]` (capped at the position: none without one), only when this statement's snapshot xmin has
 *   reached the range's tag, i.e. every transaction that could still commit into the range has ended;
 * - `due`: scheduled rows (`due_at` set) whose time has come, at any seq; with destinations (`$7`, `default` naming
 *   the rows without one) once per destination, of that destination only, each taking the partition's limit
 *   (fan-out: one destination's backlog, due at once after an outage, would otherwise fill the branch ahead of the
 *   others' retries). `$7` NULL unnests to one NULL name, which matches every row: one statement serves both, and
 *   the plan stays the same. Fresh and recheck rows are returned whatever their destination.
 * Each branch takes at most its partition's limit (per destination for due). The three are disjoint (by `due_at`,
 * and by seq for fresh and recheck).
 *
 * Every parameter is read through a scalar subquery (`(SELECT $1::int[])`, an InitPlan), for the plan cache. With
 * parameters the planner can see, PostgreSQL plans each execution anew (a custom plan) as long as the generic plan's
 * estimated cost is higher, and it was (arrays of unknown length, takes of unknown size): planning this statement took
 * about 6 ms, twice its execution, on every read. Seen through InitPlans the parameters change no estimate, so the
 * custom plans cost what the generic one does plus the planning, and from the sixth execution on the generic plan is
 * used (`postgres-plan-cache.test.ts` reads `pg_prepared_statements`). Each branch takes its partition's take from the
 * request row (`LIMIT r.take`) over an inner `LIMIT 1000` (`MAX_TAKE`) written into the text: a limit the planner cannot
 * see is planned as 10 % of what is under it, which without the inner literal was 10 % of the index and, on a
 * 10M-row table, put the plan's cost past `jit_above_cost` (JIT compilation then took 25-450 ms of every read). With it
 * the estimate stays that of at most `MAX_TAKE` rows at any table size, and one statement serves every take. Both limits
 * are in seq order (the lowest seqs, which the relay's "fewer than asked: read to the end" rule needs); the index gives
 * that order, so the plan sorts nothing (`postgres-plan-cache.test.ts`).
 *
 * The first row of the answer is a head of its own, from `snap`: the horizon and the settled partitions, with
 * no message (so an empty read still returns the horizon); the message rows follow with nulls there. (A window
 * function that put the head's fields on the first message row cost a fifth of the read's CPU.) The rows come
 * unsorted: the reader sorts them by partition and seq in the relay's process (`byPartitionAndSeq`), which saves the
 * database a sort of whole rows, bodies included (about a fifth of the read's time for a thousand rows). The tag
 * (`pg_current_xact_id()`, drawn after the snapshot) is a column of the fresh rows only: an InitPlan under a `CASE`
 * on the row's source, which PostgreSQL evaluates once, at the first fresh row, so a read without one (an idle
 * relay's) assigns no xid. Asking `EXISTS` of a materialized fresh branch instead copied every fresh row into a
 * tuplestore: about 1 µs per row, a sixth of the read. A read with another count than the table's (a relay that has not seen a resize end)
 * reads nothing: its rows would map to other partitions. Every returned keyed row carries the hold probe: the
 * nearest earlier pending row of its key that is scheduled, due or not (docs/design/read-path.md, "Read path"). The nearest,
 * not the earliest: a row may go right after its blocker only if no other scheduled row of the key lies between
 * them, and with the nearest as blocker that holds link by link (chaos found a key out of order with the earliest).
 * Order is per key and destination (docs/design/fan-out.md): the probe asks for a row of
 * the same destination, NULL matching NULL, so one destination's held rows never hold another's. Its index stays
 * `(key, seq)`; the destination is a filter, which walks past other destinations' scheduled rows of the key.
 * The probe runs only in a partition that has a scheduled row at all (`held`), since a key's rows all lie in its
 * partition: one probe of the sparse scheduled-rows index for the whole table (`snap.scheduled`), then, only when
 * that finds one, one per requested partition. A drain without failures then probes nothing per row: the probe is
 * a subquery under `CASE WHEN f.held`, never started for other rows (a lateral join under a one-time filter was
 * still rescanned once per row, about 0.5 µs each); one column, `<seq>:<ms until due>`, so one probe per held row. The recheck and due branches filter the request rows before
 * their lateral (`settled`; `snap.scheduled`), so a partition without a settled recheck range, or any partition of a
 * table without a scheduled row, never enters them: a lateral that checks such a condition inside was still
 * rescanned once per partition, and an idle read of 64 partitions took 560 µs of the server's time instead of 290.
 *
 * Plans seen on PostgreSQL 15 (custom and generic alike) with P = 64 and 100k pending rows:
 *   fresh, recheck: Limit -> Limit -> Index Scan using <t>_p64_idx (Index Cond: partition = r.partition AND seq > ...;
 *     Filter: due_at IS NULL); the recheck only for the request rows with `settled` (a filter of the CTE scan)
 *   due:            under a One-Time Filter on `snap.scheduled`: Limit -> Limit -> Index Scan using <t>_p64_due_idx
 *                   (Index Cond: partition = r.partition; Filter: due_at <= now())
 *   scheduled:      Index Only Scan using <t>_due_key_idx (one row); held: per partition, under a One-Time Filter on
 *                   it, Index Only Scan using <t>_p64_due_idx (Index Cond: partition = r.partition)
 *   hold probe:     SubPlan (under CASE WHEN f.held) -> Limit -> Index Scan Backward using
 *                   <t>_due_key_idx (Index Cond: key = f.key AND seq < f.seq; Filter: destination IS NOT DISTINCT FROM f.destination)
 */
export const readPartitions: ReaderStatement<ReadArgs> = {
  sql: ({ outbox, partitioning, partitionOf }, partitionCount) => {
    const branch = (source: string, condition: string, requests = 'req r', join = '') => `SELECT r.partition, r.held, '${source}' AS source, o.*
      FROM ${requests}${join} CROSS JOIN LATERAL (SELECT * FROM (
        SELECT o.seq, o.id, o.topic, o.type, o.key, o.payload::text AS payload_json, o.payload_bytes, o.content_type,
          o.headers, o.created_at, o.attempts + 1 AS attempts, o.last_error, o.destination
        FROM ${outbox} o
        WHERE ${partitionOf('o', partitionCount)} = r.partition AND o.state = 'pending' AND ${condition}
        ORDER BY o.seq LIMIT ${MAX_TAKE}) o ORDER BY o.seq LIMIT r.take) o`;
    const holdProbe = `SELECT h.seq::text || ':' || greatest(0, ceil(extract(epoch FROM h.due_at - now()) * 1000))::int8::text
      FROM ${outbox} h
      WHERE h.key = f.key AND h.state = 'pending' AND h.due_at IS NOT NULL AND h.seq < f.seq AND h.destination IS NOT DISTINCT FROM f.destination
      ORDER BY h.seq DESC LIMIT 1`;
    return `WITH snap AS MATERIALIZED (
      SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin,
        EXISTS (SELECT 1 FROM ${outbox} WHERE state = 'pending' AND due_at IS NOT NULL) AS scheduled
    ), req AS MATERIALIZED (
      SELECT r.*, r.rto IS NOT NULL AND (SELECT xmin FROM snap) >= r.rtag::xid8 AS settled,
        CASE WHEN (SELECT scheduled FROM snap) THEN EXISTS (SELECT 1 FROM ${outbox} o
          WHERE ${partitionOf('o', partitionCount)} = r.partition AND o.state = 'pending' AND o.due_at IS NOT NULL) ELSE false END AS held
      FROM unnest((SELECT $1::int[]), (SELECT $2::int8[]), (SELECT $3::int8[]), (SELECT $4::int8[]), (SELECT $5::text[]), (SELECT $6::int[]))
        AS r(partition, after, rfrom, rto, rtag, take)
      WHERE (SELECT partition_count FROM ${partitioning}) = ${partitionCount}
    ), found AS (
      ${branch('fresh', 'o.seq > COALESCE(r.after, 0) AND o.due_at IS NULL')}
      UNION ALL
      ${branch(
        'recheck',
        'o.seq > COALESCE(r.rfrom, 0) AND o.seq <= LEAST(r.rto, COALESCE(r.after, 0)) AND o.due_at IS NULL',
        '(SELECT * FROM req WHERE settled) r',
      )}
      UNION ALL
      ${branch(
        'due',
        `o.due_at IS NOT NULL AND o.due_at <= now() AND (d.name IS NULL OR COALESCE(o.destination, 'default') = d.name)`,
        '(SELECT * FROM req WHERE (SELECT scheduled FROM snap)) r',
        ` CROSS JOIN unnest(COALESCE((SELECT $7::text[]), ARRAY[NULL]::text[])) AS d(name)`,
      )}
    )
    SELECT s.xmin::text AS horizon, NULL::text AS tag,
      (SELECT COALESCE(array_agg(partition), '{}') FROM req WHERE settled) AS settled,
      NULL::int AS partition, NULL::text AS source, NULL::text AS seq, NULL::text AS id, NULL::text AS topic, NULL::text AS type,
      NULL::text AS key, NULL::text AS payload_json, NULL::bytea AS payload_bytes, NULL::text AS content_type, NULL::jsonb AS headers,
      NULL::timestamptz AS created_at, NULL::int AS attempts, NULL::text AS last_error, NULL::text AS destination,
      NULL::text AS waits
    FROM snap s
    UNION ALL
    SELECT NULL, CASE WHEN f.source = 'fresh' THEN (SELECT pg_current_xact_id()::text) END, NULL, f.partition, f.source, f.seq::text,
      f.id::text, f.topic, f.type, f.key, f.payload_json, f.payload_bytes, f.content_type, f.headers, f.created_at, f.attempts,
      f.last_error, f.destination,
      CASE WHEN f.held THEN (${holdProbe}) END
    FROM found f`;
  },
  params: (partitions, after, recheckFrom, recheckTo, recheckTag, takes, dueDestinations) => [
    partitions,
    after,
    recheckFrom,
    recheckTo,
    recheckTag,
    takes,
    dueDestinations ?? null,
  ],
};
