import type { FaultContext } from '../scenario.js';

/** pg_terminate_backend on every backend of this scenario's relays. */
export async function terminateRelayBackends(ctx: FaultContext): Promise<number> {
  ctx.log.begin('pg-terminate-backend');
  const result = await ctx.env.admin.query(
    `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name LIKE $1 AND pid <> pg_backend_pid()`,
    [`chaos-relay-${ctx.env.schema}%`],
  );
  return Number((result.rows[0] as { n: number }).n);
}

/**
 * Locks one pending outbox row from outside for `ms` (FOR UPDATE in an open transaction), as a stuck
 * admin session or a long report would. `position` 0 locks the head of a key, 1 a row behind the head.
 * Polls (bounded, while writers write) for such a row, since relays keep the backlog short. Only that
 * key may wait by design; every other key must keep flowing.
 */
export async function holdRowLock(ctx: FaultContext, ms: number, position: 0 | 1): Promise<void> {
  const t = `"${ctx.env.schema}".outbox`;
  const earlier = `EXISTS (SELECT 1 FROM ${t} p WHERE p.key = o.key AND p.state = 'pending' AND p.seq < o.seq)`;
  const client = await ctx.env.admin.connect();
  try {
    while (ctx.writing()) {
      await client.query('BEGIN');
      const found = await client.query(
        `SELECT o.key FROM ${t} o WHERE o.state = 'pending' AND o.key IS NOT NULL
           AND ${position === 0 ? 'NOT ' : ''}${earlier} ORDER BY o.seq LIMIT 1 FOR UPDATE SKIP LOCKED`,
      );
      const row = found.rows[0] as { key: string } | undefined;
      if (row === undefined) {
        await client.query('ROLLBACK');
        await ctx.sleep(20);
        continue;
      }
      const where = position === 0 ? 'head' : 'behind-head';
      const fault = ctx.log.begin(`row-lock-${where}`, { keys: [row.key] });
      await ctx.sleep(ms);
      await client.query('COMMIT');
      ctx.log.heal(fault);
      return;
    }
  } finally {
    client.release();
  }
}
