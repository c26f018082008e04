import { definePublisher, loadPublisherModule, textFlag } from './cli-publisher.js';

export const natsPublisher = definePublisher({
  name: 'nats',
  summary: 'NATS JetStream, with its PubAck',
  peers: '@nats-io/transport-node @nats-io/jetstream',
  brokerUrl: { protocols: ['nats:', 'tls:', 'ws:', 'wss:'], list: true },
  flags: ['subject-prefix'],
  async create(settings, { logger, publishTimeoutMs }) {
    const { createNatsPublisher } = await loadPublisherModule(this, () => import('../../../brokers/nats/index.js'));
    return createNatsPublisher({ servers: settings.brokerUrls, subjectPrefix: textFlag(settings, 'subject-prefix'), publishTimeoutMs, logger });
  },
});
