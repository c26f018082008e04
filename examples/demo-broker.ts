import { redactUrl, type OutboxMessage, type Publisher } from '../src/index.js';
import type { DemoBrokerKind } from './demo-args.js';
import { createMemoryHandover, createShipping, type Shipping } from './demo-consumer.js';
import type { DemoDatabase } from './demo-database.js';
import { createFlakyDestination } from './flaky-destination.js';

type Say = (who: string, text: string) => void;

/** Where the demo's events go, and the shipping consumer that reads them back from there. */
export interface DemoBroker {
  readonly describe: string;
  readonly publisher: Publisher;
  /**
   * Declares what the shipping consumer needs (queue and binding, or stream) and starts it behind the database's
   * inbox: before anything is produced.
   */
  startShipping(database: DemoDatabase): Promise<Shipping>;
  /** Publishes a copy of a delivered message, as a relay that died between the broker's confirmation and its mark would. */
  publishCopy(message: OutboxMessage): Promise<void>;
  /** Copies the shipping consumer will still see (0 where the broker itself drops the copy). */
  readonly copiesDelivered: number;
  /**
   * Stops the consumer and the publisher, then removes what this run declared unless `keep`, and says what it did.
   * Safe on every path: after a start that failed half-way, and more than once.
   */
  close(keep: boolean): Promise<void>;
}

export interface DemoBrokerOptions {
  readonly kind: DemoBrokerKind;
  readonly url: string | undefined;
  /** Unique to this run: names the exchange, queue, stream and subjects. */
  readonly runId: string;
  readonly say: Say;
}

/**
 * Connects to the broker and checks it as the relay does at start (`publisher.verify()`: a server down, credentials
 * or a vhost refused, each worded with its code and URL), before the demo creates anything in the database.
 */
export async function openDemoBroker(options: DemoBrokerOptions): Promise<DemoBroker> {
  switch (options.kind) {
    case 'memory':
      return memoryBroker(options);
    case 'rabbitmq':
      return rabbitMqBroker(options);
    case 'nats':
      return natsBroker(options);
  }
}

/** Runs `close` once, however often it is called. */
function once(close: (keep: boolean) => Promise<void>): (keep: boolean) => Promise<void> {
  let closing: Promise<void> | undefined;
  return (keep) => (closing ??= close(keep));
}

/** The publisher, verified; closed again when the check fails. */
async function verified<P extends Publisher>(publisher: P): Promise<P> {
  try {
    await publisher.verify?.();
    return publisher;
  } catch (error) {
    await publisher.close();
    throw error;
  }
}

function memoryBroker({ say }: DemoBrokerOptions): DemoBroker {
  let handover: ReturnType<typeof createMemoryHandover> | undefined;
  const publisher = createFlakyDestination({ failFirstAttemptOf: 3, say, deliver: (message) => handover?.deliver(message) });
  return {
    describe: 'in-memory destination (fails once, redelivers once, on purpose) with a shipping consumer behind an inbox',
    publisher,
    async startShipping(database) {
      const shipping = createShipping(database, say, 'the in-memory destination');
      handover = createMemoryHandover(shipping);
      return shipping;
    },
    publishCopy: async () => undefined, // the destination already redelivered one on its own
    copiesDelivered: 0,
    close: async () => handover?.settled(),
  };
}

async function rabbitMqBroker({ url = 'amqp://guest:guest@127.0.0.1:5672', runId, say }: DemoBrokerOptions): Promise<DemoBroker> {
  const { createRabbitMqPublisher } = await import('../src/brokers/rabbitmq/index.js');
  const { createRabbitMqConsumer } = await import('../src/brokers/rabbitmq/consumer/index.js');
  const exchange = `outboxer-demo-${runId}`;
  const queue = `outboxer-demo-${runId}-shipping`;
  // the check declares the exchange: from here on, close removes it
  const publisher = await verified(createRabbitMqPublisher({ url, exchange }));
  let consumer: { stop(): Promise<void> } | undefined;
  return {
    describe: `RabbitMQ ${redactUrl(url)}, exchange ${exchange}, queue ${queue} bound to orders.#`,
    publisher,
    async startShipping(database) {
      const shipping = createShipping(database, say, `queue ${queue}`);
      const started = createRabbitMqConsumer({ url, exchange, queue, bindingKeys: ['orders.#'], inbox: shipping.inbox, handler: shipping.handler });
      consumer = started;
      await started.start();
      say('setup', `declared exchange ${exchange} and queue ${queue} (bound to orders.#) before producing`);
      return shipping;
    },
    publishCopy: (message) => publisher.publish(message),
    copiesDelivered: 1,
    close: once(async (keep) => {
      await consumer?.stop();
      await publisher.close();
      if (keep) return say('cleanup', `kept exchange ${exchange} and queue ${queue} (--keep)`);
      say('cleanup', `deleted ${(await deleteRabbitMqRun(url, exchange, queue)).join(' and ')}`);
    }),
  };
}

/**
 * Deletes the run's queue (if it was declared) and exchange. The queue is looked up first, passively: deleting one
 * needs the permission to configure it, which a run that could not declare it may lack.
 */
async function deleteRabbitMqRun(url: string, exchange: string, queue: string): Promise<string[]> {
  const { connect } = await import('amqplib');
  const connection = await connect(url);
  connection.on('error', () => undefined);
  const deleted: string[] = [];
  try {
    const probe = await connection.createChannel();
    probe.on('error', () => undefined); // a missing queue closes the channel with 404
    if (await probe.checkQueue(queue).then(() => true, () => false)) {
      await probe.deleteQueue(queue);
      deleted.push(`queue ${queue}`);
    }
    const channel = await connection.createChannel();
    await channel.deleteExchange(exchange);
    deleted.push(`exchange ${exchange}`);
  } finally {
    await connection.close();
  }
  return deleted;
}

async function natsBroker({ url = 'nats://127.0.0.1:4222', runId, say }: DemoBrokerOptions): Promise<DemoBroker> {
  const { createNatsPublisher } = await import('../src/brokers/nats/index.js');
  const { createNatsConsumer } = await import('../src/brokers/nats/consumer/index.js');
  const { connect } = await import('@nats-io/transport-node');
  const { jetstreamManager } = await import('@nats-io/jetstream');
  const stream = `OUTBOXER_DEMO_${runId}`;
  const subjectPrefix = `outboxer-demo-${runId}`;
  const publisher = await verified(createNatsPublisher({ servers: url, subjectPrefix }));
  let admin: Awaited<ReturnType<typeof connect>>;
  let jsm: Awaited<ReturnType<typeof jetstreamManager>>;
  try {
    admin = await connect({ servers: new URL(url).host, ...credentialsOf(url) });
    jsm = await jetstreamManager(admin);
  } catch (error) {
    await publisher.close();
    throw error;
  }
  let consumer: { stop(): Promise<void> } | undefined;
  let streamCreated = false;
  return {
    describe: `NATS JetStream ${redactUrl(url)}, stream ${stream} on ${subjectPrefix}.orders.>`,
    publisher,
    async startShipping(database) {
      const shipping = createShipping(database, say, `stream ${stream}`);
      await jsm.streams.add({ name: stream, subjects: [`${subjectPrefix}.orders.>`], num_replicas: 1, duplicate_window: 120_000_000_000 });
      streamCreated = true;
      const started = createNatsConsumer({ servers: url, stream, durable: 'shipping', subjectPrefix, inbox: shipping.inbox, handler: shipping.handler });
      consumer = started;
      await started.start();
      say('setup', `created stream ${stream} (subjects ${subjectPrefix}.orders.>, 1 replica) and its durable consumer before producing`);
      return shipping;
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
    close: once(async (keep) => {
      try {
        await consumer?.stop();
        await publisher.close();
        if (!streamCreated) return;
        if (keep) return say('cleanup', `kept stream ${stream} (--keep)`);
        await jsm.streams.delete(stream);
        say('cleanup', `deleted stream ${stream}`);
      } finally {
        await admin.close();
      }
    }),
  };
}

function credentialsOf(url: string): { user?: string; pass?: string } {
  const { username, password } = new URL(url);
  return username === '' ? {} : { user: decodeURIComponent(username), pass: decodeURIComponent(password) };
}
