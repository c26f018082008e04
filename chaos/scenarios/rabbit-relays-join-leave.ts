import { joinRelay, leaveRelay } from '../faults/process-faults.js';
import type { Scenario } from '../scenario.js';

/**
 * The relay count goes 1 -> 4 -> 1 under load, again and again while writers write: relays join one
 * by one, then leave one by one, gracefully (SIGTERM) except one SIGKILL per way down (chosen by the
 * seed, sent while that relay holds a claim). The relay in slot 0 stays throughout. Joins and graceful
 * leaves owe no copy; the SIGKILL's claims are taken over after its lease.
 */
export const rabbitRelaysJoinLeave: Scenario = {
  name: 'rabbit-relays-join-leave',
  description: 'relays join one by one (1 -> 4) and leave one by one (4 -> 1): SIGTERM, and one SIGKILL each way down',
  broker: 'rabbitmq',
  sets: ['full'],
  relay: { count: 4 },
  initialRelays: 1,
  async faults(ctx) {
    const others = ctx.slots.slice(1);
    do {
      for (const slot of others) {
        await ctx.sleep(ctx.prng.int(1000, 2000));
        await joinRelay(slot);
      }
      const killed = ctx.prng.pick(others).index;
      for (const slot of [...others].reverse()) {
        await ctx.sleep(ctx.prng.int(1000, 2000));
        await leaveRelay(ctx, slot, slot.index === killed ? 'SIGKILL' : 'SIGTERM');
      }
    } while (ctx.writing());
  },
};
