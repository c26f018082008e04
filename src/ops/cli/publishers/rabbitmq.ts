import { definePublisher, loadPublisherModule, singleUrl, textFlag } from './cli-publisher.js';

export const rabbitMqPublisher = definePublisher({
  name: 'rabbitmq',
  summary: 'RabbitMQ (AMQP 0-9-1) with publisher confirms',
  peers: 'amqplib',
  brokerUrl: { protocols: ['amqp:', 'amqps:'] },
  flags: ['exchange'],
  async create(settings, { logger, publishTimeoutMs }) {
    const { createRabbitMqPublisher } = await loadPublisherModule(this, () => import('../../../brokers/rabbitmq/index.js'));
    return createRabbitMqPublisher({
      url: singleUrl(settings, this.name),
      exchange: textFlag(settings, 'exchange'),
      confirmTimeoutMs: publishTimeoutMs,
      logger,
    });
  },
});
