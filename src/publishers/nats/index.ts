export { createNatsPublisher } from './nats-publisher.js';
export { NATS_DEFAULTS, resolveNatsPublisherOptions, type NatsPublisherOptions, type ResolvedNatsPublisherOptions } from './options.js';
export { NatsHeaderNames } from './wire.js';
