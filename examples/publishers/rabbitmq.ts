/** The code of docs/publishers/rabbitmq.md in a program that runs: one message through the relay, then shutdown. */
import { logger, outbox, relayOneMessage } from './example-outbox.js';

// #region docs/publishers/rabbitmq.md
import { createRabbitMqPublisher } from 'outboxer/rabbitmq';

const publisher = createRabbitMqPublisher({
  url: process.env.AMQP_URL!,        // amqp://user:password@host:5672/vhost
  exchange: 'outbox',                // durable topic exchange, declared if missing
  logger,                            // optional, pino-compatible
});
const relay = outbox.createRelay(publisher);
// #endregion

await relayOneMessage(relay);
