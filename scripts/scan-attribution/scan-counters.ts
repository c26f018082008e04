import type pg from 'pg';
import type { SqlExecutor } from '../../src/stores/postgres/index.js';

/** Scan and tuple counters by name: `<table> seq_scan`, `index <name> idx_scan` and the like. */
export type Counters = Map<string, number>;

/** The cumulative counters of every table and index of `schema` (pg_stat_user_tables and pg_stat_user_indexes). */
export async function cumulativeCounters(client: pg.Client, schema: string): Promise<Counters> {
  await client.query('SELECT pg_stat_clear_snapshot()');
  const counters: Counters = new Map();
  const t = await client.query<{
    relname: string;
    seq_scan: string;
    seq_tup_read: string;
    idx_scan: string | null;
    n_tup_ins: string;
    n_tup_upd: string;
    n_tup_hot_upd: string;
    n_tup_del: string;
  }>('SELECT relname, seq_scan, seq_tup_read, idx_scan, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del FROM pg_stat_user_tables WHERE schemaname = $1', [
    schema,
  ]);
  for (const r of t.rows) {
    counters.set(`${r.relname} seq_scan`, Number(r.seq_scan));
    counters.set(`${r.relname} seq_tup_read`, Number(r.seq_tup_read));
    counters.set(`${r.relname} idx_scan (all its indexes)`, Number(r.idx_scan ?? 0));
    counters.set(`${r.relname} n_tup_del`, Number(r.n_tup_del));
    counters.set(`${r.relname} n_tup_upd`, Number(r.n_tup_upd));
  }
  const i = await client.query<{ indexrelname: string; idx_scan: string; idx_tup_read: string }>(
    'SELECT indexrelname, idx_scan, idx_tup_read FROM pg_stat_user_indexes WHERE schemaname = $1',
    [schema],
  );
  for (const r of i.rows) {
    counters.set(`index ${r.indexrelname} idx_scan`, Number(r.idx_scan));
    counters.set(`index ${r.indexrelname} idx_tup_read`, Number(r.idx_tup_read));
  }
  return counters;
}

/** Scans in the current transaction of this backend, per table (seq) and per index. */
async function transactionScans(client: SqlExecutor, schema: string): Promise<Counters> {
  const result = await client.query(
    `SELECT c.relname, c.relkind, pg_stat_get_xact_numscans(c.oid)::int AS scans, pg_stat_get_xact_tuples_returned(c.oid)::int AS returned
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind IN ('r', 'i')`,
    [schema],
  );
  const counters: Counters = new Map();
  for (const r of result.rows as { relname: string; relkind: string; scans: number; returned: number }[]) {
    if (r.scans > 0) counters.set(r.relkind === 'r' ? `${r.relname} seq_scan` : `index ${r.relname} idx_scan`, r.scans);
  }
  return counters;
}

/** Runs `work` inside BEGIN ... ROLLBACK on `executor` (one connection) and returns the scans it made in `schema`. */
export async function scansOf(executor: SqlExecutor, schema: string, work: () => Promise<unknown>): Promise<Counters> {
  await executor.query('BEGIN');
  try {
    const before = await transactionScans(executor, schema);
    await work();
    const after = await transactionScans(executor, schema);
    const d: Counters = new Map();
    for (const [name, value] of after) if (value - (before.get(name) ?? 0) !== 0) d.set(name, value - (before.get(name) ?? 0));
    return d;
  } finally {
    await executor.query('ROLLBACK');
  }
}
