import { definePublisher, loadPublisherModule, singleUrl, textFlag } from './cli-publisher.js';

export const mqttPublisher = definePublisher({
  name: 'mqtt',
  summary: 'MQTT 5 at QoS 1, confirmed by the PUBACK',
  peers: 'mqtt',
  brokerUrl: { protocols: ['mqtt:', 'mqtts:', 'ws:', 'wss:'] },
  flags: ['topic-prefix', 'client-id'],
  async create(settings, { logger, publishTimeoutMs }) {
    const { createMqttPublisher } = await loadPublisherModule(this, () => import('../../../brokers/mqtt/index.js'));
    const topicPrefix = textFlag(settings, 'topic-prefix');
    const clientId = textFlag(settings, 'client-id');
    return createMqttPublisher({
      url: singleUrl(settings, this.name),
      publishTimeoutMs,
      ...(topicPrefix === undefined ? {} : { topicPrefix }),
      ...(clientId === undefined ? {} : { clientId }),
      logger,
    });
  },
});
