/** The code of docs/publishers/nats.md in a program that runs: one message through the relay, then shutdown. */
import { logger, outbox, relayOneMessage } from './example-outbox.js';

// #region docs/publishers/nats.md
import { createNatsPublisher } from 'outboxer/nats';

const publisher = createNatsPublisher({
  servers: process.env.NATS_URL!,     // nats://user:password@host:4222, or an array for a cluster
  subjectPrefix: 'events',            // optional: subject = events.<topic>
  logger,                             // optional, pino-compatible
});
const relay = outbox.createRelay(publisher);
// #endregion

await relayOneMessage(relay);
