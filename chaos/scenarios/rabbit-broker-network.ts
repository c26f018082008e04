import { blackhole, latency, outage, resetConnections } from '../faults/network-faults.js';
import type { Scenario } from '../scenario.js';

/**
 * The broker as the relays see it through the TCP proxy: outages (every connection reset, new ones
 * refused), black holes (bytes vanish), latency above the publish timeout, and resets; the consumer and
 * every other test on this machine keep the real broker.
 */
export const rabbitBrokerNetwork: Scenario = {
  name: 'rabbit-broker-network',
  description: 'broker outage (reset + refuse), black hole, latency past the publish timeout and resets, via the proxy',
  broker: 'rabbitmq',
  sets: ['ci', 'full'],
  async faults(ctx) {
    const proxy = ctx.env.brokerProxy;
    await ctx.sleep(1500);
    const steps = [
      () => outage(ctx, proxy, 'broker', ctx.prng.int(2000, 4000)),
      () => blackhole(ctx, proxy, 'broker', ctx.prng.int(1500, 3000)),
      () => latency(ctx, proxy, 'broker', ctx.prng.int(ctx.relay.publishTimeoutMs, ctx.relay.publishTimeoutMs * 2), 2000),
      async () => resetConnections(ctx, proxy, 'broker'),
    ];
    let index = ctx.prng.int(0, steps.length - 1);
    while (ctx.writing()) {
      await (steps[index % steps.length] as () => Promise<void>)();
      index++;
      await ctx.sleep(ctx.prng.int(1000, 2000));
    }
  },
};
