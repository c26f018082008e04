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
 * admin session or a long report would. `position` 0 locks the head of a busy key, 1 the row behind it.
 * Only that key may wait; every other key must keep flowing.
 */
export async function holdRowLock(ctx: FaultContext, ms: number, position: 0 | 1): Promise<void> {
  const client = await ctx.env.admin.connect();
  try {
    await client.query('BEGIN');
    const busy = await client.query(
      `SELECT key FROM "${ctx.env.schema}".outbox WHERE state = 'pending' AND key IS NOT NULL GROUP BY key HAVING count(*) > $1 ORDER BY count(*) DESC LIMIT 1`,
      [position],
    );
    const key = (busy.rows[0] as { key: string } | undefined)?.key;
    if (key === undefined) {
      await client.query('ROLLBACK');
      return;
    }
    const locked = await client.query(
      `SELECT seq FROM "${ctx.env.schema}".outbox WHERE state = 'pending' AND key = $1 ORDER BY seq OFFSET $2 LIMIT 1 FOR UPDATE`,
      [key, position],
    );
    if (locked.rows.length === 0) {
      await client.query('ROLLBACK');
      return;
    }
    const fault = ctx.log.begin(`row-lock-${position === 0 ? 'head' : 'behind-head'}`, { keys: [key] });
    await ctx.sleep(ms);
    await client.query('COMMIT');
    ctx.log.heal(fault);
  } finally {
    client.release();
  }
}
