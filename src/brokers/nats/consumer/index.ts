export { createNatsConsumer, type NatsConsumer } from './nats-consumer.js';
export { NATS_CONSUMER_DEFAULTS, resolveNatsConsumerOptions, type NatsConsumerOptions, type ResolvedNatsConsumerOptions } from './options.js';
export { rawDeliveryOf } from './wire.js';
