import amqp from 'amqplib';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import type { Publisher } from '../../src/index.js';
import { createNatsPublisher } from '../../src/brokers/nats/index.js';
import { createRabbitMqPublisher } from '../../src/brokers/rabbitmq/index.js';
import { services } from '../config.js';
import { uniqueName } from './database.js';

export type BrokerKind = 'rabbitmq' | 'nats';

/**
 * Isolated broker resources for one measurement: a RabbitMQ exchange with one durable lazy queue bound to
 * the topic, or a JetStream file stream capturing it. Nobody consumes while we measure: `stored()` asks the
 * broker how many messages it holds, so a consumer's CPU does not compete with the contender.
 */
export interface BrokerTarget {
  readonly kind: BrokerKind;
  readonly topic: string;
  /** RabbitMQ exchange or JetStream stream name. */
  readonly resource: string;
  /** The library's publisher for this target, as a relay would use it. */
  publisher(): Publisher;
  stored(): Promise<number>;
  cleanup(): Promise<void>;
}

export async function createBrokerTarget(kind: BrokerKind): Promise<BrokerTarget> {
  return kind === 'rabbitmq' ? rabbitMqTarget() : natsTarget();
}

async function rabbitMqTarget(): Promise<BrokerTarget> {
  const exchange = uniqueName('bench_ex');
  const queue = uniqueName('bench_q');
  const topic = `${uniqueName('bench')}.evt`;
  const connection = await amqp.connect(services.amqpUrl);
  const channel = await connection.createChannel();
  await channel.assertExchange(exchange, 'topic', { durable: true });
  await channel.assertQueue(queue, { durable: true, arguments: { 'x-queue-mode': 'lazy' } });
  await channel.bindQueue(queue, exchange, topic);
  const publishers: Publisher[] = [];
  return {
    kind: 'rabbitmq',
    topic,
    resource: exchange,
    publisher() {
      const publisher = createRabbitMqPublisher({ url: services.amqpUrl, exchange, clientName: 'outboxer-bench' });
      publishers.push(publisher);
      return publisher;
    },
    async stored() {
      return (await channel.checkQueue(queue)).messageCount;
    },
    async cleanup() {
      await Promise.allSettled(publishers.map((p) => p.close()));
      await channel.deleteQueue(queue);
      await channel.deleteExchange(exchange);
      await connection.close();
    },
  };
}

async function natsTarget(): Promise<BrokerTarget> {
  const stream = uniqueName('bench_s');
  const topic = `${uniqueName('bench')}.evt`;
  const nc = await natsConnect({ servers: services.natsUrl });
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: stream, subjects: [topic] });
  const publishers: Publisher[] = [];
  return {
    kind: 'nats',
    topic,
    resource: stream,
    publisher() {
      const publisher = createNatsPublisher({ servers: services.natsUrl, name: 'outboxer-bench' });
      publishers.push(publisher);
      return publisher;
    },
    async stored() {
      return (await jsm.streams.info(stream)).state.messages;
    },
    async cleanup() {
      await Promise.allSettled(publishers.map((p) => p.close()));
      await jsm.streams.delete(stream);
      await nc.close();
    },
  };
}

/** Versions the servers report about themselves, for the report's conditions. */
export async function brokerVersions(): Promise<{ rabbitmq: string; nats: string }> {
  const connection = await amqp.connect(services.amqpUrl);
  const props = (connection as unknown as { connection?: { serverProperties?: { version?: string } } }).connection?.serverProperties;
  await connection.close();
  const nc = await natsConnect({ servers: services.natsUrl });
  const nats = nc.info?.version ?? 'unknown';
  await nc.close();
  return { rabbitmq: props?.version ?? 'unknown', nats };
}
