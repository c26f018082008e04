import { pauseRelay } from '../faults/process-faults.js';
import type { Scenario } from '../scenario.js';

/**
 * One relay at a time frozen with SIGSTOP while it holds a claim (waited for up to 3 s), for 1.5-3 leases,
 * then resumed, while the others run: the zombie wakes holding claims a survivor has taken over; its writes
 * must be fenced, and what it sends late may only be a copy, never an inversion.
 */
export const rabbitZombiePause: Scenario = {
  name: 'rabbit-zombie-pause',
  description: 'SIGSTOP one relay mid-batch for 1.5-3 leases, then SIGCONT (a zombie), one after another while the others run',
  broker: 'rabbitmq',
  sets: ['full'],
  async faults(ctx) {
    const { leaseMs } = ctx.relay;
    do {
      await ctx.sleep(ctx.prng.int(1000, 2000));
      await pauseRelay(ctx, ctx.prng.int(Math.round(leaseMs * 1.5), leaseMs * 3), { midBatch: true });
    } while (ctx.writing());
  },
};
