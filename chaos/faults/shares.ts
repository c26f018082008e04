import { settledSample } from '../ownership-figures.js';
import { ownershipSql, type OwnershipRow, toSample } from '../ownership-sampler.js';
import type { FaultContext } from '../scenario.js';

/**
 * Waits (at most `boundMs`) until the group is settled as the design wants it: every partition owned by a
 * live relay, relays in trouble holding none, every other live relay its fair share; with `everyRelay`, also
 * every running relay in the group and out of trouble (a relay whose broker came back takes its share again
 * once its publisher reconnected; a relay killed leaves the group when its lease runs out). A schedule waits
 * for it so that the next fault or hand-over starts from a settled group. False if it did not settle in time
 * (the schedule goes on; the figures show what happened).
 */
export async function awaitShares(ctx: FaultContext, boundMs: number, everyRelay: boolean): Promise<boolean> {
  const deadline = Date.now() + boundMs;
  const sql = ownershipSql(ctx.env.schema);
  while (Date.now() < deadline) {
    const running = ctx.slots.filter((slot) => slot.current !== undefined).length;
    const { rows } = await ctx.env.admin.query(sql);
    const sample = toSample(Date.now(), rows[0] as OwnershipRow);
    const healthy = sample.relays.filter((r) => r.live && !r.leaving && !r.trouble);
    if ((!everyRelay || healthy.length === running) && settledSample(sample, new Set())) return true;
    await ctx.sleep(50);
  }
  return false;
}
