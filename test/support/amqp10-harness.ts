import rhea, { type Connection, type EventContext, type Message } from 'rhea';
import { createAmqp10Publisher, type Amqp10PublisherOptions } from '../../src/brokers/amqp10/index.js';
import type { PublisherHarness, ReceivedMessage } from '../conformance/publisher-conformance.js';
import { closedPort, openAdmin } from './rabbitmq-harness.js';
import { services, uniqueName } from './services.js';
import { waitFor } from './wait-for.js';

/** The broker's AMQP 1.0 endpoint: RabbitMQ 3.10 serves it on its AMQP port through the rabbitmq_amqp1_0 plugin. */
export const amqp10Url = process.env.OUTBOXER_TEST_AMQP10_URL ?? services.amqpUrl;

/** The raw bytes of an AMQP 1.0 body as rhea decodes a single `data` section (typecode 0x75). */
function bodyBytesOf(message: Message): Buffer {
  const body: unknown = message.body;
  if (Buffer.isBuffer(body)) return body;
  const section = body as { typecode?: unknown; content?: unknown } | null;
  if (section !== null && section.typecode === 0x75 && Buffer.isBuffer(section.content)) return section.content;
  throw new Error(`the body is not one data section: ${JSON.stringify(body)?.slice(0, 200)}`);
}

/** A message read over AMQP 1.0, as the conformance suite compares it. */
export function toReceived(message: Message, topic: string): ReceivedMessage {
  const properties = (message.application_properties ?? {}) as Record<string, unknown>;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(properties)) if (typeof value === 'string') headers[name] = value;
  const bytes = bodyBytesOf(message);
  return {
    id: String(message.message_id),
    topic,
    type: String(message.subject),
    key: typeof message.group_id === 'string' ? message.group_id : null,
    headers,
    body: bytes.toString('utf8'),
    bytes,
    contentType: typeof message.content_type === 'string' ? message.content_type : undefined,
  };
}

/** A plain rhea receiver (AMQP 1.0, not our publisher's code) on `/queue/<queue>`, keeping every message in memory. */
export async function amqp10Receiver(queue: string): Promise<{ messages: Message[]; close(): Promise<void> }> {
  const url = new URL(amqp10Url);
  const container = rhea.create_container({ id: uniqueName('ox_rcv') });
  container.on('error', () => undefined);
  const connection: Connection = container.connect({
    host: url.hostname,
    port: Number(url.port || 5672),
    username: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    reconnect: false,
  });
  const messages: Message[] = [];
  const receiver = connection.open_receiver({ source: { address: `/queue/${queue}` }, credit_window: 1000 });
  receiver.on('message', (context: EventContext) => {
    if (context.message !== undefined) messages.push(context.message);
  });
  await new Promise<void>((resolve, reject) => {
    receiver.once('receiver_open', () => resolve());
    receiver.once('receiver_error', (context: EventContext) => reject(new Error(String(context.receiver?.error))));
    connection.once('disconnected', (context: EventContext) => reject(context.error ?? new Error('disconnected')));
  });
  return {
    messages,
    close: () =>
      new Promise<void>((resolve) => {
        connection.once('connection_close', () => resolve());
        connection.once('disconnected', () => resolve());
        connection.close();
      }),
  };
}

/**
 * A topic exchange of its own with one queue bound to `<prefix>.#` (made with amqplib over AMQP 0-9-1), the
 * publisher's address template `/exchange/<exchange>/{topic}`, and a rhea receiver on the queue; `cleanup` deletes them.
 */
export async function isolatedAmqp10Target(queueArguments: Record<string, unknown> = {}) {
  const admin = await openAdmin();
  const exchange = uniqueName('ox10_ex');
  const queue = uniqueName('ox10_q');
  const prefix = uniqueName('t');
  await admin.channel.assertExchange(exchange, 'topic', { durable: false, autoDelete: false });
  await admin.channel.assertQueue(queue, { durable: false, arguments: queueArguments });
  await admin.channel.bindQueue(queue, exchange, `${prefix}.#`);
  return {
    admin,
    exchange,
    queue,
    address: `/exchange/${exchange}/{topic}`,
    topic: (suffix: string) => `${prefix}.${suffix}`,
    async cleanup(): Promise<void> {
      await admin.channel.deleteQueue(queue).catch(() => undefined);
      await admin.channel.deleteExchange(exchange).catch(() => undefined);
      await admin.close();
    },
  };
}

export const amqp10Harness: PublisherHarness = {
  name: 'amqp10',
  async setup() {
    const target = await isolatedAmqp10Target();
    const receiver = await amqp10Receiver(target.queue);
    const publisher = createAmqp10Publisher({ url: amqp10Url, address: target.address, containerId: uniqueName('ox10_conf'), publishTimeoutMs: 15_000 });
    const topicOf = new Map<string, string>();
    return {
      publisher: {
        ...publisher,
        publish: (message) => {
          topicOf.set(message.id, message.topic);
          return publisher.publish(message);
        },
      },
      topic: target.topic,
      // RabbitMQ's AMQP 1.0 plugin accepts a message that no queue takes (docs/publishers/amqp10.md).
      unroutableTopic: null,
      waitForMessages: (count, timeoutMs = 10_000) =>
        waitFor(() => (receiver.messages.length >= count ? receiver.messages.map((m) => toReceived(m, topicOf.get(String(m.message_id)) ?? '?')) : undefined), {
          timeoutMs,
          what: `${count} messages on ${target.queue} (got ${receiver.messages.length})`,
        }),
      async cleanup() {
        await publisher.close();
        await receiver.close();
        await target.cleanup();
      },
    };
  },
  async unreachable(secret) {
    const port = await closedPort();
    return createAmqp10Publisher({ url: `amqp://guest:${secret}@127.0.0.1:${port}`, connectTimeoutMs: 1000, publishTimeoutMs: 2000 });
  },
};

/** A publisher for one test, closed by the caller. */
export function amqp10Publisher(options: Partial<Amqp10PublisherOptions> & Pick<Amqp10PublisherOptions, 'address'>) {
  return createAmqp10Publisher({ url: amqp10Url, containerId: uniqueName('ox10'), ...options });
}
