export { createAmqp10Publisher } from './amqp10-publisher.js';
export {
  AMQP10_PUBLISHER_DEFAULTS,
  resolveAmqp10PublisherOptions,
  TOPIC_PLACEHOLDER,
  type Amqp10PublisherOptions,
  type ResolvedAmqp10PublisherOptions,
} from './options.js';
export { Amqp10PropertyNames } from './wire.js';
export { AmqpConditions } from './errors.js';
