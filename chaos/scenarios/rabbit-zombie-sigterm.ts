import { pauseRelay, sigtermRelay } from '../faults/process-faults.js';
import type { Scenario } from '../scenario.js';

/**
 * A relay frozen with SIGSTOP for 1.5-2 leases while holding a claim, then resumed: its marks must be
 * fenced and its late publishes only copies. Then SIGTERM during a batch: a graceful stop owes no copy.
 */
export const rabbitZombieSigterm: Scenario = {
  name: 'rabbit-zombie-sigterm',
  description: 'SIGSTOP a relay past its lease then SIGCONT (zombie fenced); SIGTERM relays mid-batch (no copies allowed)',
  broker: 'rabbitmq',
  sets: ['ci', 'full'],
  async faults(ctx) {
    await ctx.sleep(1500);
    let round = 0;
    while (ctx.writing()) {
      if (round % 2 === 0) await pauseRelay(ctx, ctx.prng.int(Math.round(ctx.relay.leaseMs * 1.5), ctx.relay.leaseMs * 2));
      else await sigtermRelay(ctx);
      round++;
      await ctx.sleep(ctx.prng.int(500, 1500));
    }
  },
};
