/** The code of docs/publishers/redis.md in a program that runs: one message through the relay, then shutdown. */
import { logger, outbox, relayOneMessage } from './example-outbox.js';

// #region docs/publishers/redis.md
import { createRedisPublisher } from 'outboxer/redis';

const publisher = createRedisPublisher({
  url: process.env.REDIS_URL!,       // redis://user:password@host:6379/0, or rediss:// for TLS
  streamPrefix: 'events:',           // optional: stream = events:<topic>
  maxLen: 1_000_000,                 // optional: XADD ... MAXLEN ~ 1000000 (size it above your consumers' lag)
  logger,                            // optional, pino-compatible
});
const relay = outbox.createRelay(publisher);
// #endregion

await relayOneMessage(relay);
