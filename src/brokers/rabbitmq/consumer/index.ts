export { createRabbitMqConsumer, type RabbitMqConsumer } from './rabbitmq-consumer.js';
export { RABBITMQ_CONSUMER_DEFAULTS, resolveRabbitMqConsumerOptions, type RabbitMqConsumerOptions, type ResolvedRabbitMqConsumerOptions } from './options.js';
export { rawDeliveryOf } from './wire.js';
