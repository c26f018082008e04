import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import type { Publisher } from '../../src/core/ports.js';
import { Inbox } from '../../src/consumer/inbox.js';
import { createNatsConsumer } from '../../src/brokers/nats/consumer/index.js';
import { createRabbitMqConsumer } from '../../src/brokers/rabbitmq/consumer/index.js';
import { createNatsPublisher } from '../../src/brokers/nats/index.js';
import { createRabbitMqPublisher } from '../../src/brokers/rabbitmq/index.js';
import type { SqlExecutor } from '../../src/stores/postgres/database.js';
import type { CrashChildConfig } from '../support/consumer-crash-child.js';
import { createConsumerFixture, outboxMessage, type ConsumerFixture } from '../support/consumer-fixture.js';
import { addStream, natsAdmin } from '../support/nats-harness.js';
import { openAdmin } from '../support/rabbitmq-harness.js';
import { services, uniqueName } from '../support/services.js';
import { waitFor } from '../support/wait-for.js';

interface Broker {
  readonly publisher: Publisher;
  readonly topic: string;
  readonly childConfig: Pick<CrashChildConfig, 'rabbitmq' | 'nats'>;
  /** The same consumer, in this process, as a fresh instance after the crash. */
  freshConsumer(
    inbox: Inbox<SqlExecutor>,
    handler: (m: { id: string; key: string | null }, tx: SqlExecutor) => Promise<void>,
  ): { start(): Promise<void>; stop(): Promise<void> };
  /** Nothing left to deliver or to ack. */
  settled(): Promise<boolean>;
  cleanup(): Promise<void>;
}

async function rabbitMq(): Promise<Broker> {
  const admin = await openAdmin();
  const exchange = uniqueName('cx');
  const queue = uniqueName('cq');
  const prefix = uniqueName('t');
  await admin.channel.assertExchange(exchange, 'topic', { durable: true });
  const publisher = createRabbitMqPublisher({ url: services.amqpUrl, exchange });
  const rabbitmq = { url: services.amqpUrl, exchange, queue, bindingKey: `${prefix}.#` };
  return {
    publisher,
    topic: `${prefix}.orders`,
    childConfig: { rabbitmq },
    freshConsumer: (inbox, handler) => createRabbitMqConsumer({ url: rabbitmq.url, exchange, queue, bindingKeys: [rabbitmq.bindingKey], inbox, handler }),
    settled: async () => {
      const { messageCount, consumerCount } = await admin.channel.checkQueue(queue);
      return messageCount === 0 && consumerCount === 1;
    },
    async cleanup() {
      await publisher.close();
      await admin.channel.deleteQueue(queue);
      await admin.channel.deleteExchange(exchange);
      await admin.close();
    },
  };
}

async function nats(): Promise<Broker> {
  const admin = await natsAdmin();
  const prefix = uniqueName('p');
  const stream = await addStream(admin, prefix);
  const publisher = createNatsPublisher({ servers: services.natsUrl, subjectPrefix: prefix });
  const config = { servers: services.natsUrl, stream, durable: uniqueName('d'), subjectPrefix: prefix, ackWaitMs: 1000 };
  return {
    publisher,
    topic: 'orders',
    childConfig: { nats: config },
    freshConsumer: (inbox, handler) => createNatsConsumer({ ...config, inbox, handler }),
    settled: async () => {
      const info = await admin.jsm.consumers.info(stream, config.durable);
      return info.num_pending === 0 && info.num_ack_pending === 0;
    },
    async cleanup() {
      await publisher.close();
      await admin.jsm.streams.delete(stream);
      await admin.close();
    },
  };
}

describe.each([
  ['RabbitMQ', rabbitMq],
  ['NATS JetStream', nats],
])('a consumer process killed between the inbox commit and the ack (%s)', (_name, makeBroker) => {
  let fixture: ConsumerFixture | undefined;
  let broker: Broker | undefined;
  let child: ChildProcess | undefined;
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    child?.kill('SIGKILL');
    for (const stop of stops.splice(0)) await stop();
    await broker?.cleanup();
    await fixture?.cleanup();
  });

  it('does not apply the message twice: the redelivery to a fresh consumer is skipped as processed', async () => {
    fixture = await createConsumerFixture();
    broker = await makeBroker();
    const config: CrashChildConfig = { databaseUrl: services.postgresUrl, schema: fixture.schema, consumer: 'crashy', ...broker.childConfig };
    child = spawn(process.execPath, ['--import', 'tsx', 'test/support/consumer-crash-child.ts'], {
      env: { ...process.env, CONSUMER_CRASH_CONFIG: JSON.stringify(config) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child?.once('exit', (_code, signal) => resolve(signal)));
    await waitFor(() => output.includes('ready\n'), { timeoutMs: 30_000, what: 'the consumer process to start' });

    const message = outboxMessage(broker.topic, { key: 'order-9' });
    await broker.publisher.publish(message);
    await waitFor(() => output.includes(`processed ${message.id}\n`), { what: 'the inbox commit in the child' });
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    expect(await fixture.appliedCount(message.id)).toBe(1);
    expect(await fixture.inboxRow('crashy', message.id)).toMatchObject({ state: 'processed', attempts: 1 });

    const duplicates: string[] = [];
    let handled = 0;
    const inbox = new Inbox(fixture.inboxStore, { consumer: 'crashy', hooks: { onDuplicate: (e) => duplicates.push(e.id) } });
    const fresh = broker.freshConsumer(inbox, async (m, tx) => {
      handled++;
      await tx.query(`INSERT INTO ${fixture!.applied} (message_id, key) VALUES ($1, $2)`, [m.id, m.key]);
    });
    stops.push(() => fresh.stop());
    await fresh.start();
    await waitFor(() => duplicates.includes(message.id), { timeoutMs: 30_000, what: 'the redelivery skipped' });
    await waitFor(() => broker!.settled(), { what: 'the redelivery acked' });
    expect(handled).toBe(0);
    expect(await fixture.appliedCount(message.id)).toBe(1);
  });
});
