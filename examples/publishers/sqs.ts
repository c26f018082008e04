/** The code of docs/publishers/sqs.md in a program that runs: one message through the relay, then shutdown. */
import { logger, outbox, relayOneMessage } from './example-outbox.js';

// #region docs/publishers/sqs.md
import { createSqsPublisher } from 'outboxer/sqs';

const publisher = createSqsPublisher({
  queueUrl: process.env.SQS_QUEUE_URL!,     // https://sqs.<region>.amazonaws.com/<account>/<queue>
  region: process.env.AWS_REGION,           // optional: else the SDK's chain; credentials always come from it
  endpoint: process.env.AWS_ENDPOINT_URL,   // optional: an emulator such as fauxqs or LocalStack
  logger,                                   // optional, pino-compatible
});
const relay = outbox.createRelay(publisher);
// #endregion

await relayOneMessage(relay);
