import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Publisher } from '../../src/core/ports.js';
import { Inbox } from '../../src/consumer/inbox.js';
import { MessageRegistry } from '../../src/consumer/message-registry.js';
import type { ReceivedMessage } from '../../src/consumer/received-message.js';
import { createRabbitMqConsumer, type RabbitMqConsumer } from '../../src/brokers/rabbitmq/consumer/index.js';
import { createRabbitMqPublisher } from '../../src/brokers/rabbitmq/index.js';
import type { SqlExecutor } from '../../src/stores/postgres/database.js';
import { createConsumerFixture, outboxMessage, type ConsumerFixture } from '../support/consumer-fixture.js';
import { forceCloseConnectionsNamed, openAdmin, recordingLogger } from '../support/rabbitmq-harness.js';
import { services, uniqueName } from '../support/services.js';
import { waitFor } from '../support/wait-for.js';

const fastRetry = { baseDelayMs: 20, maxDelayMs: 50, jitter: 0 };

describe('RabbitMQ consumer with an inbox', () => {
  let fixture: ConsumerFixture | undefined;
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
    await fixture?.cleanup();
    fixture = undefined;
  });

  async function setup(queueArguments: Record<string, string> = {}) {
    fixture = await createConsumerFixture();
    const admin = await openAdmin();
    const exchange = uniqueName('cx');
    const queue = uniqueName('cq');
    const prefix = uniqueName('t');
    await admin.channel.assertExchange(exchange, 'topic', { durable: true });
    cleanups.push(async () => {
      await admin.channel.deleteQueue(queue).catch(() => undefined);
      await admin.channel.deleteExchange(exchange).catch(() => undefined);
      await admin.close();
    });
    const publisher: Publisher = createRabbitMqPublisher({ url: services.amqpUrl, exchange, confirmTimeoutMs: 5000 });
    cleanups.push(() => publisher.close());
    const clientName = uniqueName('consumer');
    const start = async (
      inbox: Inbox<SqlExecutor>,
      handler?: (m: ReceivedMessage, tx: SqlExecutor) => Promise<void>,
      extra: Record<string, unknown> = {},
    ): Promise<RabbitMqConsumer> => {
      const consumer = createRabbitMqConsumer<SqlExecutor>({
        url: services.amqpUrl,
        exchange,
        queue,
        bindingKeys: [`${prefix}.#`],
        prefetch: 8,
        queueArguments,
        handler,
        inbox,
        clientName,
        reconnectDelayMs: 100,
        maxReconnectDelayMs: 500,
        stopTimeoutMs: 5000,
        ...extra,
      });
      cleanups.push(() => consumer.stop());
      await consumer.start();
      return consumer;
    };
    const queueDepth = async () => (await admin.channel.checkQueue(queue)).messageCount;
    return { fixture, admin, exchange, queue, publisher, start, queueDepth, topic: (s: string) => `${prefix}.${s}`, clientName };
  }

  it('rebuilds the message from the wire and applies a redelivered copy once', async () => {
    const { fixture, publisher, start, topic, queueDepth } = await setup();
    const seen: ReceivedMessage[] = [];
    const duplicates: string[] = [];
    const inbox = new Inbox(fixture.inboxStore, { consumer: 'billing', hooks: { onDuplicate: (e) => duplicates.push(e.id) } });
    await start(inbox, async (m, tx) => {
      seen.push(m);
      await fixture.apply(m, tx);
    });
    const message = outboxMessage(topic('orders.created'), {
      key: 'order-7',
      payload: { n: 7, note: 'ü' },
      headers: { tenant: 'acme', 'correlation-id': 'c-1' },
    });
    await publisher.publish(message);
    await publisher.publish(message); // a relay retry after a lost mark: same id
    await waitFor(() => duplicates.length === 1, { what: 'the copy skipped' });
    expect(await fixture.appliedCount(message.id)).toBe(1);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toEqual({
      id: message.id,
      topic: message.topic,
      type: 'order.created',
      key: 'order-7',
      headers: { tenant: 'acme', 'correlation-id': 'c-1' },
      payload: { n: 7, note: 'ü' },
      contentType: 'application/json',
      deliveryCount: 1,
    });
    await waitFor(async () => (await queueDepth()) === 0, { what: 'both copies acked' });
  });

  it('rolls back a failing handler, retries it with backoff, and applies it once', async () => {
    const { fixture, publisher, start, topic } = await setup();
    const retries: number[] = [];
    const inbox = new Inbox(fixture.inboxStore, {
      consumer: 'billing',
      retry: { ...fastRetry, maxAttempts: 5 },
      hooks: { onRetry: (e) => retries.push(e.retryInMs) },
    });
    let calls = 0;
    await start(inbox, async (m, tx) => {
      await fixture.apply(m, tx);
      if (++calls < 3) throw new Error('ledger locked');
    });
    const message = outboxMessage(topic('orders.paid'));
    await publisher.publish(message);
    await waitFor(async () => (await fixture.inboxRow('billing', message.id))?.state === 'processed', { what: 'processed' });
    expect(calls).toBe(3);
    expect(retries).toEqual([20, 40]);
    expect(await fixture.appliedCount(message.id)).toBe(1);
    expect(await fixture.inboxRow('billing', message.id)).toMatchObject({ attempts: 3 });
  });

  it('takes dead and unknown-type messages off the queue into its dead-letter exchange, and rejects malformed ones', async () => {
    const dlx = uniqueName('dlx');
    const { fixture, publisher, start, topic, admin, queue, exchange } = await setup({ 'x-dead-letter-exchange': dlx });
    const dlq = uniqueName('dlq');
    await admin.channel.assertExchange(dlx, 'fanout', { durable: false, autoDelete: false });
    await admin.channel.assertQueue(dlq, { durable: false });
    await admin.channel.bindQueue(dlq, dlx, '');
    cleanups.push(async () => {
      await admin.channel.deleteQueue(dlq);
      await admin.channel.deleteExchange(dlx);
    });
    const registry = new MessageRegistry<SqlExecutor>()
      .register('order.created', z.object({ n: z.number() }), (m, tx) => fixture.apply(m, tx))
      .register('order.cursed', z.object({ n: z.number() }), async () => {
        throw new Error('cannot ever work');
      });
    const malformed: string[] = [];
    const inbox = new Inbox(fixture.inboxStore, { consumer: 'typed', registry, retry: { ...fastRetry, maxAttempts: 3 } });
    await start(inbox, undefined, { hooks: { onMalformed: (e: { reason: string }) => malformed.push(e.reason) } });
    const unknown = outboxMessage(topic('x'), { type: 'order.unheard-of' });
    const cursed = outboxMessage(topic('x'), { type: 'order.cursed' });
    const invalid = outboxMessage(topic('x'), { payload: { n: 'NaN' } });
    const fine = outboxMessage(topic('x'));
    for (const m of [unknown, cursed, invalid, fine]) await publisher.publish(m);
    admin.channel.publish(exchange, topic('x'), Buffer.from('{}'), { type: 'order.created' }); // no message id
    const deadLettered: string[] = [];
    await admin.channel.consume(dlq, (d) => d && deadLettered.push(String(d.properties.messageId ?? 'none')), { noAck: true });
    await waitFor(() => deadLettered.length === 4, { what: 'four dead-lettered deliveries' });
    expect(new Set(deadLettered)).toEqual(new Set([unknown.id, cursed.id, invalid.id, 'none']));
    expect(malformed).toEqual([expect.stringMatching(/OUTBOXER_MALFORMED_MESSAGE/)]);
    const dead = await fixture.inboxStore.listDead('typed', 10);
    const reasons = Object.fromEntries(dead.map((d) => [d.id, `${d.attempts} ${d.reason}`]));
    expect(reasons).toEqual({
      [unknown.id]: expect.stringMatching(/^1 OUTBOXER_UNKNOWN_TYPE/),
      [cursed.id]: '3 Error: cannot ever work',
      [invalid.id]: expect.stringMatching(
        new RegExp(`^1 OUTBOXER_SCHEMA_MISMATCH: message ${invalid.id}: payload of type "order.created" does not match its schema`),
      ),
    });
    await waitFor(async () => (await fixture.appliedCount(fine.id)) === 1, { what: 'the good one applied' });
    expect(await fixture.appliedCount()).toBe(1);
    expect((await admin.channel.checkQueue(queue)).messageCount).toBe(0);
  });

  it('reconnects after the broker closes its connection, without logging the password', async () => {
    const { fixture, publisher, start, topic, clientName } = await setup();
    const logger = recordingLogger();
    const inbox = new Inbox(fixture.inboxStore, { consumer: 'c' });
    const consumer = await start(inbox, (m, tx) => fixture.apply(m, tx), { logger });
    const first = outboxMessage(topic('a'));
    await publisher.publish(first);
    await waitFor(async () => (await fixture.appliedCount(first.id)) === 1, { what: 'first applied' });
    expect(await forceCloseConnectionsNamed(clientName)).toBe(1);
    await waitFor(() => !consumer.connected, { what: 'the loss noticed' });
    await waitFor(() => consumer.connected, { timeoutMs: 20_000, what: 'reconnected' });
    const second = outboxMessage(topic('a'));
    await publisher.publish(second);
    await waitFor(async () => (await fixture.appliedCount(second.id)) === 1, { what: 'second applied after the reconnect' });
    expect(logger.lines.some((line) => line.includes('reconnecting'))).toBe(true);
    expect(logger.lines.join('\n')).not.toContain(':guest@');
  });

  it('refuses bad options with ConfigurationError naming the option', () => {
    const inbox = {} as Inbox<SqlExecutor>;
    expect(() => createRabbitMqConsumer({ url: 'amqp://u:secret@h', queue: 'q', inbox })).toThrow(/rabbitmq consumer option inbox/);
    expect(() => createRabbitMqConsumer({ url: 'http://u:secret@h', queue: 'q', inbox })).toThrow(/rabbitmq consumer option url/);
    expect(() => createRabbitMqConsumer({ url: 'amqp://h', queue: '', inbox })).toThrow(/option queue/);
    expect(() => createRabbitMqConsumer({ url: 'amqp://h', queue: 'q', inbox, prefetch: 0 } as never)).toThrow(/option/);
    expect(() => createRabbitMqConsumer({ url: 'amqp://h', queue: 'q', inbox, prefech: 1 } as never)).toThrow(/prefech/);
  });
});
