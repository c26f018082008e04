import { redactUrl, type OutboxMessage, type Publisher } from '../src/index.js';
import { createMemoryHandover, createShipping, type Shipping } from './demo-consumer.js';
import type { DemoDatabase } from './demo-database.js';
import { createFlakyDestination } from './flaky-destination.js';

type Say = (who: string, text: string) => void;

/** Where the demo's events go, and the shipping consumer that reads them back from there. */
export interface DemoBroker {
  readonly describe: string;
  readonly publisher: Publisher;
  readonly shipping: Shipping;
  /** Declares what the consumer needs (queue and binding, or stream) and starts it: before anything is produced. */
  start(): Promise<void>;
  /** Publishes a copy of a delivered message, as a relay that died between the broker's confirmation and its mark would. */
  publishCopy(message: OutboxMessage): Promise<void>;
  /** Copies the shipping consumer will still see (0 where the broker itself drops the copy). */
  readonly copiesDelivered: number;
  /** Stops the consumer, then removes what `start` declared unless `keep`; says what it did. */
  close(keep: boolean): Promise<void>;
}

export interface DemoBrokerOptions {
  readonly kind: string;
  readonly url: string | undefined;
  /** Unique to this run: names the exchange, queue, stream and subjects. */
  readonly runId: string;
  readonly database: DemoDatabase;
  readonly say: Say;
}

export async function openDemoBroker(options: DemoBrokerOptions): Promise<DemoBroker> {
  switch (options.kind) {
    case 'memory':
      return memoryBroker(options);
    case 'rabbitmq':
      return rabbitMqBroker(options);
    case 'nats':
      return natsBroker(options);
    default:
      throw new Error(`--broker must be memory, rabbitmq or nats; got ${options.kind}`);
  }
}

function memoryBroker({ database, say }: DemoBrokerOptions): DemoBroker {
  const shipping = createShipping(database, say, 'the in-memory destination');
  const handover = createMemoryHandover(shipping);
  const publisher = createFlakyDestination({ failFirstAttemptOf: 3, say, deliver: (message) => handover.deliver(message) });
  return {
    describe: 'in-memory destination (fails once, redelivers once, on purpose) with a shipping consumer behind an inbox',
    publisher,
    shipping,
    start: async () => undefined,
    publishCopy: async () => undefined, // the destination already redelivered one on its own
    copiesDelivered: 0,
    close: () => handover.settled(),
  };
}

async function rabbitMqBroker({ url = 'amqp://guest:guest@127.0.0.1:5672', runId, database, say }: DemoBrokerOptions): Promise<DemoBroker> {
  const { createRabbitMqPublisher } = await import('../src/publishers/rabbitmq/index.js');
  const { createRabbitMqConsumer } = await import('../src/consumer/rabbitmq/index.js');
  const exchange = `outboxer-demo-${runId}`;
  const queue = `outboxer-demo-${runId}-shipping`;
  const shipping = createShipping(database, say, `queue ${queue}`);
  const publisher = createRabbitMqPublisher({ url, exchange });
  const consumer = createRabbitMqConsumer({ url, exchange, queue, bindingKeys: ['orders.#'], inbox: shipping.inbox, handler: shipping.handler });
  return {
    describe: `RabbitMQ ${redactUrl(url)}, exchange ${exchange}, queue ${queue} bound to orders.#`,
    publisher,
    shipping,
    async start() {
      await consumer.start();
      say('setup', `declared exchange ${exchange} and queue ${queue} (bound to orders.#) before producing`);
    },
    publishCopy: (message) => publisher.publish(message),
    copiesDelivered: 1,
    async close(keep) {
      await consumer.stop();
      if (keep) return say('cleanup', `kept exchange ${exchange} and queue ${queue} (--keep)`);
      const { connect } = await import('amqplib');
      const connection = await connect(url);
      try {
        const channel = await connection.createChannel();
        await channel.deleteQueue(queue);
        await channel.deleteExchange(exchange);
      } finally {
        await connection.close();
      }
      say('cleanup', `deleted queue ${queue} and exchange ${exchange}`);
    },
  };
}

async function natsBroker({ url = 'nats://127.0.0.1:4222', runId, database, say }: DemoBrokerOptions): Promise<DemoBroker> {
  const { createNatsPublisher } = await import('../src/publishers/nats/index.js');
  const { createNatsConsumer } = await import('../src/consumer/nats/index.js');
  const { connect } = await import('@nats-io/transport-node');
  const { jetstreamManager } = await import('@nats-io/jetstream');
  const stream = `OUTBOXER_DEMO_${runId}`;
  const subjectPrefix = `outboxer-demo-${runId}`;
  const shipping = createShipping(database, say, `stream ${stream}`);
  const publisher = createNatsPublisher({ servers: url, subjectPrefix });
  const consumer = createNatsConsumer({ servers: url, stream, durable: 'shipping', subjectPrefix, inbox: shipping.inbox, handler: shipping.handler });
  const admin = await connect({ servers: new URL(url).host, ...credentialsOf(url) });
  const jsm = await jetstreamManager(admin);
  return {
    describe: `NATS JetStream ${redactUrl(url)}, stream ${stream} on ${subjectPrefix}.orders.>`,
    publisher,
    shipping,
    async start() {
      await jsm.streams.add({ name: stream, subjects: [`${subjectPrefix}.orders.>`], num_replicas: 1, duplicate_window: 120_000_000_000 });
      await consumer.start();
      say('setup', `created stream ${stream} (subjects ${subjectPrefix}.orders.>, 1 replica) and its durable consumer before producing`);
    },
    async publishCopy(message) {
      const before = (await jsm.streams.info(stream)).state.messages;
      await publisher.publish(message);
      const after = (await jsm.streams.info(stream)).state.messages;
      say('broker', after === before
        ? `JetStream recognised the copy by its Nats-Msg-Id and did not store it again (the stream still holds ${after})`
        : `JetStream stored the copy (outside its duplicate window): the inbox will skip it`);
    },
    copiesDelivered: 0,
    async close(keep) {
      await consumer.stop();
      if (keep) say('cleanup', `kept stream ${stream} (--keep)`);
      else {
        await jsm.streams.delete(stream);
        say('cleanup', `deleted stream ${stream}`);
      }
      await admin.close();
    },
  };
}

function credentialsOf(url: string): { user?: string; pass?: string } {
  const { username, password } = new URL(url);
  return username === '' ? {} : { user: decodeURIComponent(username), pass: decodeURIComponent(password) };
}
