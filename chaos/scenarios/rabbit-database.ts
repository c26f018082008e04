import { holdRowLock, terminateRelayBackends } from '../faults/database-faults.js';
import { latency, outage } from '../faults/network-faults.js';
import type { Scenario } from '../scenario.js';

/** The database side: backends terminated, outages and latency through the proxy, a row lock held from outside. */
export function databaseScenario(name: string, rowLockMs: number, sets: Scenario['sets']): Scenario {
  return {
    name,
    description: `pg_terminate_backend, database outage and latency via the proxy, an outbox row locked from outside for ${rowLockMs / 1000} s`,
    broker: 'rabbitmq',
    sets,
    // The long lock wants writes going on while it is held: 7.5x the light load's, 2x the sustained one's.
    workload: (base) => (rowLockMs > 20_000 ? { txnsPerWriter: Math.max(600, base.txnsPerWriter * 2) } : {}),
    async faults(ctx) {
      const proxy = ctx.env.pgProxy;
      await ctx.sleep(1000);
      const lock = holdRowLock(ctx, rowLockMs, ctx.prng.chance(0.5) ? 0 : 1);
      const steps = [
        async () => void (await terminateRelayBackends(ctx)),
        () => outage(ctx, proxy, 'database', ctx.prng.int(1000, 3000)),
        () => latency(ctx, proxy, 'database', ctx.prng.int(100, 400), 2000),
      ];
      let index = 0;
      while (ctx.writing()) {
        await ctx.sleep(ctx.prng.int(800, 1800));
        await (steps[index % steps.length] as () => Promise<void>)();
        index++;
      }
      await lock;
    },
  };
}

export const rabbitDatabase = databaseScenario('rabbit-database', 8000, ['ci']);
export const rabbitDatabaseFull = databaseScenario('rabbit-database-long-lock', 60_000, ['full']);
