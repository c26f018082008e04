export { createPubSubPublisher } from './pubsub-publisher.js';
export {
  PUBSUB_PUBLISHER_DEFAULTS,
  pubSubOptionsFromUrl,
  resolvePubSubPublisherOptions,
  type PubSubClientConfig,
  type PubSubPublisherOptions,
  type ResolvedPubSubPublisherOptions,
} from './options.js';
export { PUBSUB_LIMITS, PubSubAttributeNames } from './wire.js';
