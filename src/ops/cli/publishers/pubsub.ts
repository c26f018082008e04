import { definePublisher, loadPublisherModule, singleUrl, textFlag } from './cli-publisher.js';

export const pubSubPublisher = definePublisher({
  name: 'pubsub',
  summary: "Google Cloud Pub/Sub (tested on Google's emulator), the key as ordering key",
  peers: '@google-cloud/pubsub',
  brokerUrl: { protocols: ['pubsub:'] },
  flags: ['topic-prefix'],
  async create(settings, { logger, publishTimeoutMs }) {
    const { createPubSubPublisher, pubSubOptionsFromUrl } = await loadPublisherModule(this, () => import('../../../brokers/pubsub/index.js'));
    const topicPrefix = textFlag(settings, 'topic-prefix');
    return createPubSubPublisher({
      ...pubSubOptionsFromUrl(singleUrl(settings, this.name)),
      publishTimeoutMs,
      ...(topicPrefix === undefined ? {} : { topicPrefix }),
      logger,
    });
  },
});
