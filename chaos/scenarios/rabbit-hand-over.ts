import { joinRelay, leaveRelay } from '../faults/process-faults.js';
import { awaitShares } from '../faults/shares.js';
import type { RelaySlot } from '../relay-slot.js';
import type { Scenario } from '../scenario.js';

/**
 * Issue 20, item 2: a hand-over (a join, a graceful leave) must leave partitions unowned for well under a
 * second, not up to a heartbeat. Under load, relays go 1 -> 3 -> 1 -> 3 -> 1 one by one: four joins, three
 * leaves by SIGTERM (graceful: no copy allowed), and last a SIGKILL (mid-batch when it can): a relay that dies
 * still needs its lease to run out, and its figure shows it. Each step starts once the group has settled
 * after the last one (bounded), 0.3-0.8 s later, so that each hand-over's window holds all of it.
 * Figures (`ownership` in the report): unowned time per join and per graceful leave (target: under 1 s each),
 * and for the SIGKILL.
 */
export const rabbitHandOver: Scenario = {
  name: 'rabbit-hand-over',
  description: 'relays join (1 -> 3) and leave (3 -> 1) one by one, twice: SIGTERM, and a SIGKILL last; unowned time per hand-over',
  broker: 'rabbitmq',
  sets: ['ci', 'full'],
  // the writers write through most of the schedule
  workload: (base) => ({ txnsPerWriter: base.txnsPerWriter * 2 }),
  relay: { count: 3 },
  initialRelays: 1,
  ownership: { maxHandoverUnownedMs: 1000 },
  async faults(ctx) {
    const [, one, two] = ctx.slots as [RelaySlot, RelaySlot, RelaySlot];
    const step = async (act: () => Promise<void>, boundMs = 10_000) => {
      await awaitShares(ctx, boundMs, true);
      await ctx.sleep(ctx.prng.int(300, 800));
      await act();
    };
    for (const last of ['SIGTERM', 'SIGKILL'] as const) {
      await step(() => joinRelay(one));
      await step(() => joinRelay(two));
      await step(() => leaveRelay(ctx, two, 'SIGTERM'));
      await step(() => leaveRelay(ctx, one, last));
    }
    // its lease runs out, then the survivor takes its partitions: all within the figure's window
    await awaitShares(ctx, ctx.relay.leaseMs + 10_000, true);
    await ctx.sleep(500);
  },
};
