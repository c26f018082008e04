import amqp from 'amqplib';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect, type NatsConnection } from '@nats-io/transport-node';
import type { Publisher } from '../../src/core/ports.js';
import { createNatsPublisher } from '../../src/brokers/nats/index.js';
import { createRabbitMqPublisher } from '../../src/brokers/rabbitmq/index.js';
import { services, uniqueName } from './services.js';

/**
 * A real broker with isolated resources for one test, a consumer that records every delivery (copies
 * included, in arrival order), and publishers pointed at it directly or through a port of our choosing.
 */
export interface BrokerRig {
  readonly name: string;
  readonly brokerPort: number;
  topic(suffix: string): string;
  /** Publisher options tuned for tests: short timeouts. `port` routes through a proxy. */
  publisher(port?: number): Publisher;
  /** URL and extra CLI flags for a relay process publishing to this rig. */
  cliArgs(): string[];
  /** Ids in the order the consumer got them. */
  readonly deliveries: string[];
  cleanup(): Promise<void>;
}

export async function rabbitMqRig(): Promise<BrokerRig> {
  const exchange = uniqueName('ex');
  const prefix = uniqueName('p');
  const connection = await amqp.connect(services.amqpUrl);
  const channel = await connection.createChannel();
  await channel.assertExchange(exchange, 'topic', { durable: true });
  const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
  await channel.bindQueue(queue, exchange, `${prefix}.#`);
  const deliveries: string[] = [];
  await channel.consume(
    queue,
    (msg) => {
      if (msg !== null) deliveries.push(String(msg.properties.messageId));
    },
    { noAck: true },
  );
  const publishers: Publisher[] = [];
  const url = (port: number) => services.amqpUrl.replace(/:\d+$/, `:${port}`);
  return {
    name: 'RabbitMQ',
    brokerPort: 5672,
    topic: (suffix) => `${prefix}.${suffix}`,
    publisher(port = 5672) {
      const publisher = createRabbitMqPublisher({ url: url(port), exchange, confirmTimeoutMs: 3000, connectTimeoutMs: 2000, maxMessageBytes: 1024 * 1024 });
      publishers.push(publisher);
      return publisher;
    },
    cliArgs: () => ['--publisher', 'rabbitmq', '--broker-url', services.amqpUrl, '--exchange', exchange],
    deliveries,
    async cleanup() {
      await Promise.all(publishers.map((p) => p.close()));
      await channel.deleteExchange(exchange);
      await connection.close();
    },
  };
}

export async function natsRig(): Promise<BrokerRig> {
  const stream = uniqueName('s');
  const prefix = uniqueName('p');
  const nc: NatsConnection = await natsConnect({ servers: services.natsUrl });
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: stream, subjects: [`${prefix}.>`] });
  const consumer = await jetstream(nc).consumers.get(stream);
  const messages = await consumer.consume();
  const deliveries: string[] = [];
  void (async () => {
    for await (const m of messages) deliveries.push(m.headers?.get('Nats-Msg-Id') ?? '');
  })();
  const publishers: Publisher[] = [];
  return {
    name: 'NATS JetStream',
    brokerPort: 4222,
    topic: (suffix) => `${prefix}.${suffix}`,
    publisher(port = 4222) {
      const publisher = createNatsPublisher({ servers: `nats://127.0.0.1:${port}`, publishTimeoutMs: 3000, connectTimeoutMs: 2000 });
      publishers.push(publisher);
      return publisher;
    },
    cliArgs: () => ['--publisher', 'nats', '--broker-url', services.natsUrl],
    deliveries,
    async cleanup() {
      await Promise.all(publishers.map((p) => p.close()));
      await messages.close();
      await jsm.streams.delete(stream);
      await nc.close();
    },
  };
}
