export { createRedisPublisher } from './redis-publisher.js';
export {
  REDIS_PUBLISHER_DEFAULTS,
  resolveRedisPublisherOptions,
  type RedisEndpoint,
  type RedisPublisherOptions,
  type ResolvedRedisPublisherOptions,
} from './options.js';
export { REDIS_HEADER_PREFIX, RedisFieldNames, streamFor } from './wire.js';
