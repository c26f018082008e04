/** The code of docs/publishers/pubsub.md in a program that runs: one message through the relay, then shutdown. */
import { logger, outbox, relayOneMessage } from './example-outbox.js';

// #region docs/publishers/pubsub.md
import { createPubSubPublisher } from 'outboxer/pubsub';

const publisher = createPubSubPublisher({
  projectId: process.env.PUBSUB_PROJECT_ID!,      // the project that holds the topics
  apiEndpoint: process.env.PUBSUB_API_ENDPOINT,   // optional: a regional endpoint, or the emulator's host:port
  topicPrefix: 'outbox-',                         // optional: topic id = outbox-<topic>
  logger,                                         // optional, pino-compatible
});
const relay = outbox.createRelay(publisher);
// #endregion

await relayOneMessage(relay);
