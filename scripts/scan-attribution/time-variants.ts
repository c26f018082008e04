import pg from 'pg';
import { scansOf, type Counters } from './scan-counters.js';
import type { StatementVariant } from './statement-variants.js';

/** The timings of one variant in one plan mode: execution and planning ms of the timed runs, its WAL records and scans. */
export interface VariantTiming {
  ms: number[];
  planMs: number[];
  wal: number;
  scans: Counters;
}

const literal = (value: unknown): string => {
  if (value === null) return 'NULL';
  if (Array.isArray(value))
    return pg.Client.prototype.escapeLiteral(`{${value.map((v) => (v === null ? 'NULL' : `"${String(v).replace(/(["\\])/g, '\\$1')}"`)).join(',')}}`);
  return pg.Client.prototype.escapeLiteral(String(value));
};

/**
 * EXPLAIN (ANALYZE, BUFFERS, WAL) of each variant, prepared on one connection of `pool`, 12 rounds with custom and
 * generic plans interleaved: the first two rounds warm up (the second gives the plans, with timing), the rest are timed.
 * Timings are keyed `<label> | custom` and `<label> | generic`.
 */
export async function timeVariants(
  pool: pg.Pool,
  schema: string,
  variants: readonly StatementVariant[],
): Promise<{ timings: Map<string, VariantTiming>; plans: string[] }> {
  const plans: string[] = [];
  const timings = new Map<string, VariantTiming>();
  const pc = await pool.connect();
  try {
    for (let v = 0; v < variants.length; v++) await pc.query(`PREPARE v${v} AS ${(variants[v] as StatementVariant)[1]}`);
    for (let round = 0; round < 12; round++) {
      for (const mode of round % 2 === 0 ? ['force_custom_plan', 'force_generic_plan'] : ['force_generic_plan', 'force_custom_plan']) {
        await pc.query(`SET plan_cache_mode = ${mode}`);
        for (let v = 0; v < variants.length; v++) {
          const [label, , params] = variants[v] as StatementVariant;
          const key = `${label} | ${mode.replace('force_', '').replace('_plan', '')}`;
          let plan: string[] = [];
          const scans = await scansOf(pc, schema, async () => {
            const result = await pc.query<{ 'QUERY PLAN': string }>(
              `EXPLAIN (ANALYZE, ${round < 2 ? '' : 'TIMING OFF, '}BUFFERS, WAL) EXECUTE v${v}(${params.map(literal).join(', ')})`,
            );
            plan = result.rows.map((r) => r['QUERY PLAN']);
          });
          const ms = Number(/Execution Time: ([\d.]+)/.exec(plan.join('\n'))?.[1]);
          const wal = Number(/WAL: records=(\d+)/.exec(plan.join('\n'))?.[1] ?? 0);
          const planMs = Number(/Planning Time: ([\d.]+)/.exec(plan.join('\n'))?.[1] ?? 0);
          const entry = timings.get(key) ?? { ms: [], planMs: [], wal, scans };
          if (round >= 2) {
            entry.ms.push(ms);
            entry.planMs.push(planMs);
          }
          timings.set(key, entry);
          if (round === 1) plans.push(`### ${key}\n\n\`\`\`\n${plan.join('\n')}\n\`\`\`\n`);
        }
      }
    }
    await pc.query('DEALLOCATE ALL');
    await pc.query('RESET plan_cache_mode');
  } finally {
    pc.release();
  }
  return { timings, plans };
}
