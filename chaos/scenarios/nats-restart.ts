import { restartNats } from '../faults/broker-faults.js';
import { killRandomRelay } from '../faults/process-faults.js';
import type { Scenario } from '../scenario.js';

/** A private nats-server (JetStream, own port and store) killed and restarted; relays killed too. */
export const natsRestart: Scenario = {
  name: 'nats-restart',
  description: 'SIGKILL and restart of a private nats-server (same port and store), plus random relay SIGKILLs',
  broker: 'nats',
  sets: ['ci', 'full'],
  async faults(ctx) {
    await ctx.sleep(1500);
    let round = 0;
    while (ctx.writing()) {
      if (round % 2 === 0) await restartNats(ctx, ctx.prng.int(1000, 3000));
      else killRandomRelay(ctx);
      round++;
      await ctx.sleep(ctx.prng.int(1500, 3000));
    }
  },
};
