import type { Publisher } from '../../src/core/ports.js';
import { createRedisPublisher } from '../../src/brokers/redis/index.js';
import type { BrokerRig } from './broker-rigs.js';
import { dropPrefix, raw, redisAdmin, redisUrl, streamsUnder } from './redis-harness.js';
import { uniqueName } from './services.js';

/**
 * Redis Streams for the broker-agnostic suites: the publisher writes under a stream prefix of this rig, and a
 * consumer of its own connection finds the streams under it (SCAN) and reads each with XREAD from where it left
 * off, so `deliveries` holds every entry's id (copies included), in stream order per stream.
 */
export async function redisRig(): Promise<BrokerRig> {
  const streamPrefix = `${uniqueName('rig')}:`;
  const topicPrefix = uniqueName('p');
  const reader = await redisAdmin();
  const deliveries: string[] = [];
  const positions = new Map<string, string>();
  let stopped = false;

  const readOnce = async (): Promise<void> => {
    for (const stream of await streamsUnder(reader, streamPrefix)) if (!positions.has(stream)) positions.set(stream, '0-0');
    if (positions.size === 0) return;
    const streams = [...positions.keys()];
    const reply = await raw<[Buffer, [Buffer, Buffer[]][]][] | null>(reader, [
      'XREAD',
      'COUNT',
      '1000',
      'BLOCK',
      '50',
      'STREAMS',
      ...streams,
      ...streams.map((s) => positions.get(s) ?? '0-0'),
    ]);
    for (const [name, entries] of reply ?? []) {
      const stream = name.toString('utf8');
      for (const [entryId, fields] of entries) {
        positions.set(stream, entryId.toString('utf8'));
        const idAt = fields.findIndex((field, i) => i % 2 === 0 && field.toString('utf8') === 'id');
        deliveries.push(fields[idAt + 1]?.toString('utf8') ?? '');
      }
    }
  };
  const consuming = (async () => {
    while (!stopped) {
      const read = await readOnce().then(
        () => true,
        () => false,
      ); // false: a stream dropped under it, or Redis away
      if (!read || positions.size === 0) await new Promise((resolve) => setTimeout(resolve, 25));
    }
  })();

  const publishers: Publisher[] = [];
  const url = (port: number) => {
    const through = new URL(redisUrl);
    through.port = String(port);
    return through.toString();
  };
  return {
    name: 'Redis Streams',
    brokerPort: 6379,
    topic: (suffix) => `${topicPrefix}.${suffix}`,
    publisher(port = 6379) {
      const publisher = createRedisPublisher({ url: url(port), streamPrefix, publishTimeoutMs: 3000, connectTimeoutMs: 2000, maxMessageBytes: 1024 * 1024 });
      publishers.push(publisher);
      return publisher;
    },
    cliArgs: () => ['--publisher', 'redis', '--broker-url', redisUrl, '--stream-prefix', streamPrefix],
    deliveries,
    async cleanup() {
      await Promise.all(publishers.map((p) => p.close()));
      stopped = true;
      await consuming;
      await dropPrefix(reader, streamPrefix);
      reader.destroy();
    },
  };
}
