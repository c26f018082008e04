import { afterEach, describe, expect, it } from 'vitest';
import type { OutboxMessageInput } from '../../src/core/message.js';
import { Outbox } from '../../src/core/outbox.js';
import type { OutboxStore } from '../../src/core/ports.js';
import { createRabbitMqPublisher } from '../../src/brokers/rabbitmq/rabbitmq-publisher.js';
import { createWebhookPublisher } from '../../src/brokers/webhook/webhook-publisher.js';
import { MysqlOutboxStore } from '../../src/stores/mysql/mysql-store.js';
import { SqliteOutboxStore } from '../../src/stores/sqlite/sqlite-store.js';
import { freshMysqlDatabase } from '../support/mysql-database.js';
import { isolatedExchange, toReceived } from '../support/rabbitmq-harness.js';
import { services } from '../support/services.js';
import { freshSqliteFile } from '../support/sqlite-file.js';
import { waitFor } from '../support/wait-for.js';
import { closedPort, newSecret, receivedMessage, WebhookReceiver } from '../support/webhook-harness.js';

interface Dialect<Tx> {
  readonly store: OutboxStore<Tx>;
  enqueue(outbox: Outbox<Tx>, messages: OutboxMessageInput[]): Promise<unknown>;
  cleanup(): Promise<unknown>;
}

const dialects = {
  async mariadb(): Promise<Dialect<unknown>> {
    const fresh = await freshMysqlDatabase('fan_my');
    const store = new MysqlOutboxStore(fresh.database);
    return {
      store: store as OutboxStore,
      enqueue: (outbox, messages) => outbox.transaction(fresh.database, (tx) => outbox.enqueueMany(tx, messages)),
      cleanup: () => fresh.cleanup(),
    };
  },
  async sqlite(): Promise<Dialect<unknown>> {
    const file = freshSqliteFile('fan');
    const store = new SqliteOutboxStore(file.database());
    const writer = file.database();
    return {
      store: store as OutboxStore,
      enqueue: (outbox, messages) => writer.transaction((tx) => outbox.enqueueMany(tx, messages)),
      async cleanup() {
        await store.close();
        await file.cleanup();
      },
    };
  },
};

/** Fan-out on the other databases (docs/fan-out.md): the relay and the routes are the same; the store holds the rows. */
describe.each(Object.keys(dialects) as (keyof typeof dialects)[])('fan-out on %s', (name) => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('holds only the destination that is down, and publishes it in key order once back, nothing lost', async () => {
    const dialect = await dialects[name]();
    cleanups.push(() => dialect.cleanup());
    await dialect.store.migrate();
    const rabbit = await isolatedExchange();
    cleanups.push(() => rabbit.cleanup());
    const port = await closedPort();
    const prefix = rabbit.topic('x').split('.')[0] as string;
    const outbox = new Outbox(dialect.store, { routes: [{ topic: `${prefix}.#`, to: ['default', 'partner'] }] });
    const relay = outbox.createRelay(createRabbitMqPublisher({ url: services.amqpUrl, exchange: rabbit.exchange }), {
      leaseMs: 3000,
      publishTimeoutMs: 1000,
      errorBackoffMs: 100,
      maxErrorBackoffMs: 400,
      destinations: { partner: { publisher: createWebhookPublisher({ url: `http://127.0.0.1:${port}/outbox`, secret: newSecret() }) } },
    });
    cleanups.push(() => outbox.close());
    relay.start();
    const messages = Array.from({ length: 20 }, (_, n): OutboxMessageInput => ({ topic: `${prefix}.orders`, type: `n${n}`, key: `k${n % 3}`, payload: { n } }));
    await dialect.enqueue(outbox, messages.slice(0, 10));
    await dialect.enqueue(outbox, messages.slice(10));

    const types = (received: readonly { readonly key: string | null; readonly type: string }[], key: string) =>
      received.filter((m) => m.key === key).map((m) => m.type);
    const expected = (key: string) =>
      types(
        messages.map((m) => ({ key: m.key ?? null, type: m.type })),
        key,
      );
    const fromRabbit = (await rabbit.waitForDeliveries(20)).map(toReceived);
    for (const key of ['k0', 'k1', 'k2']) expect(types(fromRabbit, key)).toEqual(expected(key));
    await waitFor(
      async () =>
        ((await dialect.store.listPending?.({ limit: 50, destination: 'partner' })) ?? []).some((m) =>
          (m.lastError ?? '').includes('OUTBOXER_BROKER_UNAVAILABLE'),
        ),
      { timeoutMs: 10_000, what: 'partner rows held' },
    );

    const partner = await WebhookReceiver.start(() => ({ status: 204 }), port);
    cleanups.push(() => partner.close());
    const accepted = (await partner.waitForRequests(20, 20_000)).map(receivedMessage);
    for (const key of ['k0', 'k1', 'k2']) expect(types(accepted, key)).toEqual(expected(key));
    await waitFor(async () => ((await dialect.store.stats()).pending === 0 ? true : undefined), { timeoutMs: 10_000, what: 'an empty outbox' });
    expect(await dialect.store.listDead(10)).toEqual([]);
  });
});
