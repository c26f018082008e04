import { restartRabbitMq } from '../faults/broker-faults.js';
import type { Scenario } from '../scenario.js';

/** The real `rabbitmqctl stop_app`/`start_app` of the shared broker: full set only, run it alone. */
export const rabbitStopApp: Scenario = {
  name: 'rabbit-stop-app',
  description: 'rabbitmqctl stop_app / start_app of the shared RabbitMQ (full set; nothing else may run)',
  broker: 'rabbitmq',
  sets: ['full'],
  async faults(ctx) {
    await ctx.sleep(2000);
    while (ctx.writing()) {
      await restartRabbitMq(ctx, ctx.prng.int(2000, 5000));
      await ctx.sleep(ctx.prng.int(3000, 5000));
    }
  },
};
