import { awaitHolding } from '../faults/holding.js';
import { blackhole, outage } from '../faults/network-faults.js';
import { pickRelay } from '../faults/process-faults.js';
import type { Scenario } from '../scenario.js';

/**
 * One relay at a time cut off from the database through its own proxy, while it holds a claim (waited for
 * up to 3 s), for 1.5-2.5 leases, while the others keep their connections: alternately a black hole (bytes vanish, the relay finds out by its
 * query timeout) and an outage (connections reset, new ones refused). Its claims expire and move to the
 * others; what it publishes meanwhile it cannot mark (copies within the budget); back, it must be fenced.
 */
export const rabbitRelayDatabaseCutoff: Scenario = {
  name: 'rabbit-relay-db-cutoff',
  description: 'one relay cut off from the database (its own proxy: black hole, or reset + refuse) for 1.5-2.5 leases while the others run',
  broker: 'rabbitmq',
  sets: ['full'],
  privateDatabaseProxies: true,
  async faults(ctx) {
    const { leaseMs } = ctx.relay;
    let round = ctx.prng.int(0, 1);
    do {
      await ctx.sleep(ctx.prng.int(1000, 2000));
      const victim = pickRelay(ctx);
      const proxy = victim === undefined ? undefined : ctx.slots[victim.slot]?.databaseProxy;
      if (victim === undefined || proxy === undefined) continue;
      const cut = round % 2 === 0 ? blackhole : outage;
      const what = (await awaitHolding(ctx, victim, 3000)) ? 'relay-database-mid-batch' : 'relay-database';
      await cut(ctx, proxy, what, ctx.prng.int(Math.round(leaseMs * 1.5), Math.round(leaseMs * 2.5)), { target: victim.name });
      round++;
    } while (ctx.writing());
  },
};
