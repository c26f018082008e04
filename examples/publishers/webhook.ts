/** The code of docs/publishers/webhook.md in a program that runs: one message through the relay, then shutdown. */
import { logger, outbox, relayOneMessage } from './example-outbox.js';

// #region docs/publishers/webhook.md
import { createWebhookPublisher } from 'outboxer/webhook';

const publisher = createWebhookPublisher({
  url: process.env.WEBHOOK_URL!,             // https://hooks.example.com/outbox: where topics without a route go
  routes: [{ topic: 'payments.#', url: process.env.PAYMENTS_WEBHOOK_URL ?? process.env.WEBHOOK_URL! }],
  secret: process.env.WEBHOOK_SECRET!,       // whsec_<base64>; an array of two during a rotation
  logger,                                    // optional, pino-compatible
});
const relay = outbox.createRelay(publisher);
// #endregion

await relayOneMessage(relay);
