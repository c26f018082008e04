/** The code of docs/publishers/amqp10.md in a program that runs: one message through the relay, then shutdown. */
import { logger, outbox, relayOneMessage } from './example-outbox.js';

// #region docs/publishers/amqp10.md
import { createAmqp10Publisher } from 'outboxer/amqp10';

const publisher = createAmqp10Publisher({
  url: process.env.AMQP10_URL!,         // amqp://user:password@host:5672 or amqps://...:5671 (password percent-encoded)
  address: '/exchange/outbox/{topic}',  // RabbitMQ 3.10: exchange "outbox", routing key = topic; Service Bus, Artemis: '{topic}'
  logger,                               // optional, pino-compatible
});
const relay = outbox.createRelay(publisher);
// #endregion

await relayOneMessage(relay);
