import { killRandomRelay } from '../faults/process-faults.js';
import { lateTopology } from '../faults/topology-faults.js';
import type { FaultContext, Scenario } from '../scenario.js';
import type { BrokerKind } from '../spec.js';

/** A relay SIGKILLed while the topic is paused: its successor knows nothing of the pause and must find it again. */
async function faults(ctx: FaultContext): Promise<void> {
  await Promise.all([
    lateTopology(ctx, ctx.prng.int(3000, 5000)),
    (async () => {
      await ctx.sleep(ctx.prng.int(1500, 2500));
      killRandomRelay(ctx);
    })(),
  ]);
}

function lateTopologyScenario(broker: BrokerKind, what: string): Scenario {
  return {
    name: `${broker === 'rabbitmq' ? 'rabbit' : 'nats'}-late-topology`,
    description: `10 % of events go to topics with no ${what} until one is made 3-5 s after a relay reports them paused; a relay SIGKILL meanwhile`,
    broker,
    sets: ['full'],
    workload: { lateTopologyShare: 0.1 },
    faults,
  };
}

export const rabbitLateTopology = lateTopologyScenario('rabbitmq', 'queue bound');
export const natsLateTopology = lateTopologyScenario('nats', 'stream');
