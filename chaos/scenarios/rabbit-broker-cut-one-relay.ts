import { cutRelayBroker } from '../faults/broker-cut.js';
import { awaitShares } from '../faults/shares.js';
import type { Scenario } from '../scenario.js';

/**
 * Issue 20, item 1: a relay that cannot reach its broker must not sit on partitions a healthy relay could serve.
 * Three relays, each with a broker proxy of its own; the broker of one (chosen by the seed among those holding
 * their share) is cut off (reset + refuse) for 2.5-3.5 leases while the others keep theirs, then comes back;
 * 1-2 s later another relay's, while writers write; then every relay takes its share again. The cut relay reports
 * trouble after `brokerTroubleAfterMs` (lease/3), drains and releases; the others take its partitions at their
 * next group check; back, it takes its share again once its publisher has reconnected.
 * Figures (`ownership` in the report): time from each cut to every partition held by relays whose broker is up
 * (target: within a lease), and the latency of the messages committed during the cuts (p99 within a lease + 1 s).
 */
export const rabbitBrokerCutOneRelay: Scenario = {
  name: 'rabbit-broker-cut-one-relay',
  description: "one relay's broker cut off (its own proxy: reset + refuse) for 2.5-3.5 leases while the others keep theirs; then another relay's",
  broker: 'rabbitmq',
  sets: ['ci', 'full'],
  // the writers write through both cuts (up to 10.5 s each)
  workload: (base) => ({ txnsPerWriter: Math.round(base.txnsPerWriter * 2.5) }),
  privateBrokerProxies: true,
  ownership: (relay) => ({ maxCutToServedMs: relay.leaseMs, maxCutLatencyP99Ms: relay.leaseMs + 1000 }),
  async faults(ctx) {
    const { leaseMs } = ctx.relay;
    await awaitShares(ctx, 20_000, true);
    let last: number | undefined;
    for (let cut = 0; cut < 2; cut++) {
      // the last victim may not have its share back yet (its publisher reconnects in the background)
      await awaitShares(ctx, 10_000, false);
      await ctx.sleep(ctx.prng.int(1000, 2000));
      last = await cutRelayBroker(ctx, ctx.prng.int(Math.round(leaseMs * 2.5), Math.round(leaseMs * 3.5)), last);
    }
    // every victim takes its share back before the drain (the figure `shareBackMs`)
    await awaitShares(ctx, 40_000, true);
  },
};
