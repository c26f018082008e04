import type { FaultContext } from '../scenario.js';

/**
 * Fan-out: one named destination's broker cut off for every relay at once, through the destination's own proxy
 * (`Environment.destinations`): its connections are reset and new ones refused for `ms`, while `default` and the
 * other destinations keep theirs. Each relay must pause that destination alone (its rows held, uncounted) and keep
 * publishing to the others; once back, publish what waited, in key order. The fault's kind,
 * `destination-<name>-outage`, is what the figures look for (`DESTINATION_OUTAGE` in `chaos/fan-out-figures.ts`);
 * it explains copies and delays of that destination's rows only. Just before the heal it records what the outbox
 * holds (`observed`, see `heldRows`).
 */
export async function cutDestination(ctx: FaultContext, name: string, ms: number): Promise<void> {
  const destination = ctx.env.destinations.find((d) => d.spec.name === name);
  if (destination === undefined) throw new Error(`no fan-out destination ${name} in this scenario`);
  const fault = ctx.log.begin(`destination-${name}-outage`, { destinations: [name] });
  destination.proxy.setMode('refuse');
  await ctx.sleep(ms);
  fault.observed = await heldRows(ctx, name).catch(() => ({}));
  destination.proxy.setMode('forward');
  ctx.log.heal(fault);
}

/**
 * The destination's pending rows, those held for it (`last_error` `destination missing since ...`), those held
 * behind an earlier row of their key (`waits for an earlier message of its key ...`), the most
 * attempts a healthy, not transiently failing one has used (a hold counts none), and the other destinations'
 * pending rows (a backlog there would mean the outage held them back too).
 */
async function heldRows(ctx: FaultContext, name: string): Promise<Record<string, number>> {
  const { rows } = await ctx.env.admin.query(
    `SELECT count(*) FILTER (WHERE destination = $1)::int AS pending,
            count(*) FILTER (WHERE destination = $1 AND last_error LIKE 'destination missing since %')::int AS held,
            count(*) FILTER (WHERE destination = $1 AND last_error LIKE 'waits for an earlier message%')::int AS "heldBehind",
            COALESCE(max(attempts) FILTER (WHERE destination = $1 AND payload->>'kind' = 'normal'), 0)::int AS "maxAttemptsNormal",
            count(*) FILTER (WHERE destination IS DISTINCT FROM $1)::int AS "othersPending"
       FROM "${ctx.env.schema}".outbox WHERE state = 'pending'`,
    [name],
  );
  return rows[0] as Record<string, number>;
}
