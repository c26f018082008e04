export { createRabbitMqPublisher } from './rabbitmq-publisher.js';
export {
  RABBITMQ_PUBLISHER_DEFAULTS,
  resolveRabbitMqPublisherOptions,
  type RabbitMqExchangeType,
  type RabbitMqPublisherOptions,
  type ResolvedRabbitMqPublisherOptions,
} from './options.js';
export { OUTBOXER_APP_ID, OutboxAmqpHeaders } from './amqp-headers.js';
