import { outage } from '../faults/network-faults.js';
import type { Scenario } from '../scenario.js';

/**
 * A broker outage longer than the relays' retry budget (maxAttempts x backoff, about 3 s here; about
 * 13 min with the library defaults): no healthy message may be parked as dead (test/integration/relay.test.ts,
 * "rides out a broker outage longer than the retry budget"). Full set only.
 */
export const rabbitBrokerLongOutage: Scenario = {
  name: 'rabbit-broker-long-outage',
  description: 'a 10 s broker outage (reset + refuse) against a 3 s retry budget: no healthy message may go dead',
  broker: 'rabbitmq',
  sets: ['full'],
  relay: { maxAttempts: 12 },
  async faults(ctx) {
    await ctx.sleep(2000);
    await outage(ctx, ctx.env.brokerProxy, 'broker', 10_000);
  },
};
