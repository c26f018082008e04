import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { headers as natsHeaders } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import type { Publisher } from '../../src/core/ports.js';
import { Inbox } from '../../src/consumer/inbox.js';
import { MessageRegistry } from '../../src/consumer/message-registry.js';
import type { ReceivedMessage } from '../../src/consumer/received-message.js';
import { createNatsConsumer, type NatsConsumer } from '../../src/brokers/nats/consumer/index.js';
import { createNatsPublisher } from '../../src/brokers/nats/index.js';
import type { SqlExecutor } from '../../src/stores/postgres/database.js';
import { createConsumerFixture, outboxMessage, type ConsumerFixture } from '../support/consumer-fixture.js';
import { addStream, natsAdmin, type NatsAdmin } from '../support/nats-harness.js';
import { services, uniqueName } from '../support/services.js';
import { waitFor } from '../support/wait-for.js';

const fastRetry = { baseDelayMs: 20, maxDelayMs: 50, jitter: 0 };

describe('NATS JetStream consumer with an inbox', () => {
  let fixture: ConsumerFixture | undefined;
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
    await fixture?.cleanup();
    fixture = undefined;
  });

  async function setup() {
    fixture = await createConsumerFixture();
    const admin: NatsAdmin = await natsAdmin();
    const prefix = uniqueName('p');
    const stream = await addStream(admin, prefix);
    cleanups.push(async () => {
      await admin.jsm.streams.delete(stream);
      await admin.close();
    });
    const publisher: Publisher = createNatsPublisher({ servers: services.natsUrl, subjectPrefix: prefix, publishTimeoutMs: 5000 });
    cleanups.push(() => publisher.close());
    const durable = uniqueName('d');
    const start = async (
      inbox: Inbox<SqlExecutor>,
      handler?: (m: ReceivedMessage, tx: SqlExecutor) => Promise<void>,
      extra: Record<string, unknown> = {},
    ): Promise<NatsConsumer> => {
      const consumer = createNatsConsumer<SqlExecutor>({
        servers: services.natsUrl,
        stream,
        durable,
        subjectPrefix: prefix,
        inbox,
        handler,
        maxAckPending: 8,
        stopTimeoutMs: 5000,
        ...extra,
      });
      cleanups.push(() => consumer.stop());
      await consumer.start();
      return consumer;
    };
    const settled = async () => {
      const info = await admin.jsm.consumers.info(stream, durable);
      return info.num_pending === 0 && info.num_ack_pending === 0;
    };
    return { fixture, admin, prefix, stream, durable, publisher, start, settled };
  }

  it('rebuilds the message from the wire and applies a copy outside the duplicate window once', async () => {
    const { fixture, admin, prefix, publisher, start, settled } = await setup();
    const seen: ReceivedMessage[] = [];
    const duplicates: string[] = [];
    const inbox = new Inbox(fixture.inboxStore, { consumer: 'billing', hooks: { onDuplicate: (e) => duplicates.push(e.id) } });
    await start(inbox, async (m, tx) => {
      seen.push(m);
      await fixture.apply(m, tx);
    });
    const message = outboxMessage('orders.created', {
      key: 'order-7',
      payload: { n: 7 },
      headers: { tenant: 'acme', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    });
    await publisher.publish(message);
    // The same message stored again past JetStream's duplicate window: only Outbox-Id identifies it.
    const copy = natsHeaders();
    copy.set('Outbox-Id', message.id);
    copy.set('Outbox-Type', message.type);
    copy.set('Outbox-Key', 'order-7');
    await jetstream(admin.nc).publish(`${prefix}.orders.created`, message.body, { headers: copy });
    await waitFor(() => duplicates.length === 1, { what: 'the copy skipped' });
    expect(await fixture.appliedCount(message.id)).toBe(1);
    expect(seen).toEqual([
      {
        id: message.id,
        topic: 'orders.created',
        type: 'order.created',
        key: 'order-7',
        payload: { n: 7 },
        contentType: 'application/json',
        deliveryCount: 1,
        headers: { tenant: 'acme', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
      },
    ]);
    await waitFor(settled, { what: 'both acked' });
  });

  it('retries a failing handler in place, keeps the ack wait alive while it works, and terms dead messages', async () => {
    const { fixture, publisher, start, settled } = await setup();
    const registry = new MessageRegistry<SqlExecutor>()
      .register('order.created', z.object({ n: z.number() }), async (m, tx) => {
        await fixture.apply(m, tx);
        calls++;
        if (calls === 1) throw new Error('first call fails');
        if (calls === 2) await new Promise((resolve) => setTimeout(resolve, 2500)); // longer than ack_wait
      })
      .register('order.cursed', z.object({ n: z.number() }), async () => {
        throw new Error('never works');
      });
    let calls = 0;
    const duplicates: string[] = [];
    const inbox = new Inbox(fixture.inboxStore, {
      consumer: 'typed',
      registry,
      retry: { ...fastRetry, maxAttempts: 3 },
      hooks: { onDuplicate: (e) => duplicates.push(e.id) },
    });
    // one delivery per transaction: the attempts below count each run (batches: consumer-batches.test.ts)
    await start(inbox, undefined, { ackWaitMs: 1000, maxBatch: 1 });
    const slow = outboxMessage('a');
    const cursed = outboxMessage('b', { type: 'order.cursed' });
    const unknown = outboxMessage('c', { type: 'order.who-knows' });
    for (const m of [slow, cursed, unknown]) await publisher.publish(m);
    await waitFor(async () => (await fixture.inboxRow('typed', slow.id))?.state === 'processed', { what: 'slow one processed' });
    await waitFor(settled, { what: 'everything settled' });
    expect(calls).toBe(2);
    expect(duplicates).toEqual([]); // no redelivery while it was being worked on
    expect(await fixture.appliedCount()).toBe(1);
    expect(await fixture.inboxRow('typed', slow.id)).toMatchObject({ attempts: 2 });
    expect(await fixture.inboxRow('typed', cursed.id)).toMatchObject({ state: 'dead', attempts: 3, last_error: 'Error: never works' });
    expect(await fixture.inboxRow('typed', unknown.id)).toMatchObject({
      state: 'dead',
      attempts: 1,
      last_error: expect.stringMatching(/^OUTBOXER_UNKNOWN_TYPE/),
    });
  });

  it('refuses bad options with ConfigurationError naming the option', () => {
    const inbox = {} as Inbox<SqlExecutor>;
    expect(() => createNatsConsumer({ servers: 'nats://u:secret@h', stream: 's', durable: 'd', inbox })).toThrow(/nats consumer option inbox/);
    expect(() => createNatsConsumer({ servers: 'http://h', stream: 's', durable: 'd', inbox })).toThrow(/nats consumer option servers/);
    expect(() => createNatsConsumer({ servers: 'nats://h', stream: 'a.b', durable: 'd', inbox })).toThrow(/option stream/);
    expect(() => createNatsConsumer({ servers: 'nats://h', stream: 's', durable: 'd', inbox, maxDeliver: 0 } as never)).toThrow(/option/);
  });
});
