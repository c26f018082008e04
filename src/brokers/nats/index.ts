export { createNatsPublisher } from './nats-publisher.js';
export { NATS_DEFAULTS, resolveNatsPublisherOptions, type NatsPublisherOptions, type ResolvedNatsPublisherOptions } from './options.js';
export { CLOUD_EVENTS_NATS_PREFIX, NatsHeaderNames } from './wire.js';
export { decodeHeaderValue, encodeHeaderValue } from '../header-value.js';
export type { CloudEventsOptions } from '../cloudevents.js';
