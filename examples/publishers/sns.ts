/** The code of docs/publishers/sns.md in a program that runs: one message through the relay, then shutdown. */
import { logger, outbox, relayOneMessage } from './example-outbox.js';

// #region docs/publishers/sns.md
import { createSnsPublisher } from 'outboxer/sns';

const publisher = createSnsPublisher({
  topicArnPrefix: process.env.SNS_TOPIC_ARN_PREFIX!,   // arn:aws:sns:<region>:<account>: (+ topic name)
  routes: { 'orders.created': process.env.SNS_ORDERS_TOPIC_ARN! },   // topics with dots need a route
  region: process.env.AWS_REGION,                      // optional: else the SDK's chain
  endpoint: process.env.AWS_ENDPOINT_URL,              // optional: an emulator such as fauxqs or LocalStack
  logger,                                              // optional, pino-compatible
});
const relay = outbox.createRelay(publisher);
// #endregion

await relayOneMessage(relay);
