import type { Incarnation } from '../relay-slot.js';
import type { FaultContext } from '../scenario.js';
import { outage } from './network-faults.js';

/**
 * The broker of one running relay (chosen by the seed, never the slot in `spare`) is cut off through the relay's
 * own proxy for `ms`: its connections are reset and new ones refused, while the other relays keep their broker.
 * It must report trouble and give its partitions to them; once back, take its share again. Needs
 * `privateBrokerProxies`. Resolves with the slot cut, once healed. The fault's kind, `relay-broker-outage`, is
 * what the figures look for (`BROKER_CUT_PREFIX` in `chaos/ownership-figures.ts`).
 */
export async function cutRelayBroker(ctx: FaultContext, ms: number, spare?: number): Promise<number | undefined> {
  const running = ctx.slots.filter((slot) => slot.current !== undefined && slot.brokerProxy !== undefined && slot.index !== spare);
  if (running.length === 0) return undefined;
  const slot = ctx.prng.pick(running);
  const victim = slot.current as Incarnation;
  await outage(ctx, slot.brokerProxy as NonNullable<typeof slot.brokerProxy>, 'relay-broker', ms, { target: victim.name });
  return slot.index;
}
