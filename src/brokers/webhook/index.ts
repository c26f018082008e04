export { createWebhookPublisher } from './webhook-publisher.js';
export { resolveWebhookPublisherOptions, type ResolvedWebhookPublisherOptions, type WebhookPublisherOptions, type WebhookRoute } from './options.js';
export { WebhookHeaderNames } from './wire.js';
export { retryAfterMs } from './errors.js';
export { decodeHeaderValue } from '../header-value.js';
