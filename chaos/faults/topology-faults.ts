import { readJournal } from '../journal.js';
import { poll } from '../poll.js';
import type { FaultContext } from '../scenario.js';

/** Whether any relay incarnation so far reported a topic paused (its `onTopicPaused` hook journals it). */
export function anyTopicPaused(ctx: FaultContext): boolean {
  return ctx.slots.some((slot) => slot.incarnations.some((i) => readJournal(i.journal).some((r) => r.e === 'topic-paused')));
}

/**
 * The late topics have no destination from the start (no binding / no stream). Once a relay reports one
 * paused, and `lateMs` later, the destination is created. Their events must then all arrive, in key order,
 * none dead: a missing destination is not the message's fault. Keys behind a late event wait with it.
 */
export async function lateTopology(ctx: FaultContext, lateMs: number): Promise<void> {
  const fault = ctx.log.begin('late-topology', { mayDuplicate: false });
  await poll(() => anyTopicPaused(ctx), 60_000, 'a relay to report a late topic paused', 200);
  await ctx.sleep(lateMs);
  await ctx.env.createLateTopology();
  ctx.log.heal(fault);
}
