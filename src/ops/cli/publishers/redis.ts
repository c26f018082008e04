import { definePublisher, loadPublisherModule, singleUrl, textFlag } from './cli-publisher.js';

export const redisPublisher = definePublisher({
  name: 'redis',
  summary: 'Redis Streams, one XADD per message',
  peers: 'redis',
  brokerUrl: { protocols: ['redis:', 'rediss:'] },
  flags: ['stream-prefix', 'max-len'],
  async create(settings, { logger, publishTimeoutMs }) {
    const { createRedisPublisher } = await loadPublisherModule(this, () => import('../../../brokers/redis/index.js'));
    const streamPrefix = textFlag(settings, 'stream-prefix');
    const maxLen = settings.flags['max-len'];
    return createRedisPublisher({
      url: singleUrl(settings, this.name),
      publishTimeoutMs,
      ...(streamPrefix === undefined ? {} : { streamPrefix }),
      ...(typeof maxLen === 'number' ? { maxLen } : {}),
      logger,
    });
  },
});
