import { jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import amqp from 'amqplib';
import { createNatsPublisher } from '../../src/brokers/nats/index.js';
import { createRabbitMqPublisher } from '../../src/brokers/rabbitmq/index.js';
import type { Publisher } from '../../src/index.js';
import { services } from '../config.js';
import type { BrokerKind } from './broker-target.js';
import { uniqueName } from './database.js';
import { ceilingMessage, type Workload } from './workload.js';

/** Unconfirmed publishes at once while preloading: the relay's window. */
const PRELOAD_WINDOW = 256;

/**
 * A backlog for one consumer drain of (m): a RabbitMQ exchange with a durable queue bound to the topic (declared
 * as outboxer's consumer declares it, so its own declaration matches), or a JetStream file stream capturing the
 * topic. Preloaded by outboxer's own publisher, as a relay would have published it; deleted by `cleanup`.
 */
export interface ConsumerSource {
  readonly kind: BrokerKind;
  readonly topic: string;
  /** RabbitMQ exchange (empty for NATS). */
  readonly exchange: string;
  /** RabbitMQ queue or JetStream stream. */
  readonly name: string;
  preload(count: number, workload: Omit<Workload, 'topic'>): Promise<void>;
  /** Messages the broker still holds for this drain (NATS: the stream's, or the durable's unacknowledged ones once it exists). */
  held(durable?: string): Promise<number>;
  cleanup(): Promise<void>;
}

export async function createConsumerSource(kind: BrokerKind): Promise<ConsumerSource> {
  return kind === 'rabbitmq' ? rabbitMqSource() : natsSource();
}

async function publishAll(publisher: Publisher, count: number, workload: Workload): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) await publisher.publish(ceilingMessage(next++, workload));
  };
  try {
    await Promise.all(Array.from({ length: Math.min(PRELOAD_WINDOW, count) }, lane));
  } finally {
    await publisher.close();
  }
}

async function rabbitMqSource(): Promise<ConsumerSource> {
  const exchange = uniqueName('bench_cx');
  const queue = uniqueName('bench_cq');
  const topic = `${uniqueName('bench')}.evt`;
  const connection = await amqp.connect(services.amqpUrl);
  const channel = await connection.createChannel();
  await channel.assertExchange(exchange, 'topic', { durable: true });
  await channel.assertQueue(queue, { durable: true, arguments: {} });
  await channel.bindQueue(queue, exchange, topic);
  return {
    kind: 'rabbitmq',
    topic,
    exchange,
    name: queue,
    preload: (count, workload) =>
      publishAll(createRabbitMqPublisher({ url: services.amqpUrl, exchange, clientName: 'outboxer-bench-preload' }), count, { ...workload, topic }),
    held: async () => (await channel.checkQueue(queue)).messageCount,
    async cleanup() {
      await channel.deleteQueue(queue).catch(() => undefined);
      await channel.deleteExchange(exchange).catch(() => undefined);
      await connection.close();
    },
  };
}

async function natsSource(): Promise<ConsumerSource> {
  const stream = uniqueName('bench_cs');
  const topic = `${uniqueName('bench')}.evt`;
  const nc = await natsConnect({ servers: services.natsUrl });
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: stream, subjects: [topic] });
  return {
    kind: 'nats',
    topic,
    exchange: '',
    name: stream,
    preload: (count, workload) => publishAll(createNatsPublisher({ servers: services.natsUrl, name: 'outboxer-bench-preload' }), count, { ...workload, topic }),
    async held(durable) {
      if (durable === undefined) return (await jsm.streams.info(stream)).state.messages;
      const info = await jsm.consumers.info(stream, durable);
      return info.num_pending + info.num_ack_pending;
    },
    async cleanup() {
      await jsm.streams.delete(stream).catch(() => undefined);
      await nc.close();
    },
  };
}
