import { killRandomRelay } from '../faults/process-faults.js';
import type { Scenario } from '../scenario.js';

/** 3 relays, writers and a consumer on RabbitMQ; relays SIGKILLed at random moments and restarted. */
export const rabbitSigkillRandom: Scenario = {
  name: 'rabbit-sigkill-random',
  description: 'SIGKILL of a random relay every 1.5-4 s while writers write; each comes back after 0.5 s',
  broker: 'rabbitmq',
  sets: ['ci', 'full'],
  async faults(ctx) {
    await ctx.sleep(1500);
    while (ctx.writing()) {
      killRandomRelay(ctx);
      await ctx.sleep(ctx.prng.int(1500, 4000));
    }
  },
};
