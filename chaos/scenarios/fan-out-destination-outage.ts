import { cutDestination } from '../faults/destination-faults.js';
import { meanCommittedPerTransaction } from '../load.js';
import type { Scenario, ScenarioSet } from '../scenario.js';
import type { WorkloadSpec } from '../spec.js';

/**
 * Writers write this long before the cut (they start 1-2 s after the schedule), and after the heal at least
 * `TAIL_MS` or half the outage: the cut destination's backlog goes out first (13-14 s after a 60 s outage at light
 * load), and the baseline wants messages committed after that too.
 */
const LEAD_MS = 6000;
const TAIL_MS = 10_000;
/** Committed events per second (each stored 3 times): light load, and under `sustained` (3 x 250 rows/s). */
const LIGHT_RATE = 30;
const SUSTAINED_RATE = 250;

/**
 * Writers that write on a fixed schedule from before the cut to `TAIL_MS` after the heal, so that every window
 * (before, during, after) has messages of every destination.
 */
function writeThrough(outageMs: number): (base: WorkloadSpec) => Partial<WorkloadSpec> {
  return (base) => {
    const ratePerSecond = base.ratePerSecond === null ? LIGHT_RATE : Math.min(base.ratePerSecond, SUSTAINED_RATE);
    const seconds = (LEAD_MS + outageMs + Math.max(TAIL_MS, outageMs / 2)) / 1000;
    return { ratePerSecond, txnsPerWriter: Math.ceil((ratePerSecond * seconds) / meanCommittedPerTransaction(base) / base.writers) };
  };
}

/**
 * Issue 21: one destination of three is down while the two others flow. Writers enqueue through a route to
 * `default` (the relays' own RabbitMQ exchange), `partner` (a RabbitMQ exchange of its own, reached through a proxy
 * of its own) and `analytics` (NATS JetStream, a private nats-server): one row each, in one transaction. Three
 * relays have all three destinations. The partner's proxy is cut (every connection reset, new ones refused) for
 * `outageMs` while writers write: each relay must pause `partner` alone (rows held uncounted, `last_error`
 * `destination missing since ...`) and keep publishing to the others; once back, the partner gets everything, in
 * key order. The checker counts every destination apart (lost, phantoms, order per key and destination, copies
 * attributed: the cut explains partner copies only). Figures (`fanOut` in the report): per destination, the latency
 * (commit -> first delivery) of messages committed before, during and after the outage; target: the healthy
 * destinations' p99 during the outage within max(2 x their p99 outside it, that p99 + 250 ms).
 */
function fanOutDestinationOutage(name: string, sets: readonly ScenarioSet[], outageMs: number): Scenario {
  return {
    name,
    description: `three destinations (default and partner on RabbitMQ, analytics on NATS); the partner's broker cut off (its own proxy: reset + refuse) for ${outageMs / 1000} s while writers write`,
    broker: 'rabbitmq',
    sets,
    workload: writeThrough(outageMs),
    fanOut: {
      destinations: [
        { name: 'partner', broker: 'rabbitmq' },
        { name: 'analytics', broker: 'nats' },
      ],
      targets: { healthyP99Factor: 2, healthyP99SlackMs: 250 },
    },
    async faults(ctx) {
      await ctx.sleep(LEAD_MS);
      await cutDestination(ctx, 'partner', outageMs);
    },
  };
}

export const fanOutDestinationOutageFull = fanOutDestinationOutage('fan-out-destination-outage', ['full'], 60_000);
/** The ci set's: the same with a 15 s outage (the ci set runs inside `npm test`). */
export const fanOutDestinationOutageShort = fanOutDestinationOutage('fan-out-destination-outage-short', ['ci'], 15_000);
