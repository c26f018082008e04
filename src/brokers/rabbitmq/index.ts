export { createRabbitMqPublisher } from './rabbitmq-publisher.js';
export {
  RABBITMQ_PUBLISHER_DEFAULTS,
  resolveRabbitMqPublisherOptions,
  type RabbitMqExchangeType,
  type RabbitMqPublisherOptions,
  type ResolvedRabbitMqPublisherOptions,
} from './options.js';
export { CLOUD_EVENTS_AMQP_PREFIX, OUTBOXER_APP_ID, OutboxAmqpHeaders } from './amqp-headers.js';
export type { CloudEventsOptions } from '../cloudevents.js';
