import { definePublisher, loadPublisherModule, singleUrl, textFlag } from './cli-publisher.js';

export const amqp10Publisher = definePublisher({
  name: 'amqp10',
  summary: "AMQP 1.0 (Service Bus, Artemis, Qpid; tested on RabbitMQ's plugin), confirmed by the Accepted outcome",
  peers: 'rhea',
  brokerUrl: { protocols: ['amqp:', 'amqps:'] },
  flags: ['address'],
  async create(settings, { logger, publishTimeoutMs }) {
    const { createAmqp10Publisher } = await loadPublisherModule(this, () => import('../../../brokers/amqp10/index.js'));
    const address = textFlag(settings, 'address');
    return createAmqp10Publisher({ url: singleUrl(settings, this.name), publishTimeoutMs, ...(address === undefined ? {} : { address }), logger });
  },
});
