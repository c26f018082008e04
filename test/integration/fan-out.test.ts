import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/core/outbox.js';
import type { OutboxMessageInput } from '../../src/core/message.js';
import type { Relay } from '../../src/core/relay.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { createNatsPublisher } from '../../src/brokers/nats/nats-publisher.js';
import { createRabbitMqPublisher } from '../../src/brokers/rabbitmq/rabbitmq-publisher.js';
import { createWebhookPublisher } from '../../src/brokers/webhook/webhook-publisher.js';
import { addStream, natsAdmin, readStream } from '../support/nats-harness.js';
import { createPostgresFixture } from '../support/postgres-fixture.js';
import { isolatedExchange, toReceived } from '../support/rabbitmq-harness.js';
import { services } from '../support/services.js';
import { waitFor } from '../support/wait-for.js';
import { closedPort, newSecret, receivedMessage, WebhookReceiver } from '../support/webhook-harness.js';

/** Per key, the ids in the order a destination received them. */
function byKey(messages: readonly { readonly key: string | null; readonly type: string }[]): Map<string, string[]> {
  const keys = new Map<string, string[]>();
  for (const m of messages) keys.set(m.key ?? '', [...(keys.get(m.key ?? '') ?? []), m.type]);
  return keys;
}

/**
 * Fan-out end to end (docs/fan-out.md): one enqueue writes a row per destination, one relay publishes each to its
 * own broker (RabbitMQ, NATS JetStream, a webhook), and a destination that is down holds only its own rows.
 */
describe('fan-out to several destinations', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function rig(partnerPort?: number) {
    const fixture = await createPostgresFixture();
    cleanups.push(() => fixture.cleanup());
    const rabbit = await isolatedExchange();
    cleanups.push(() => rabbit.cleanup());
    const nats = await natsAdmin();
    cleanups.push(() => nats.close());
    const prefix = rabbit.topic('x').split('.')[0] as string;
    const stream = await addStream(nats, `fan.${prefix}`);
    cleanups.push(() => nats.jsm.streams.delete(stream));
    const partner = partnerPort === undefined ? await WebhookReceiver.start() : undefined;
    if (partner !== undefined) cleanups.push(() => partner.close());
    const partnerUrl = partner?.url() ?? `http://127.0.0.1:${partnerPort}/outbox`;
    const db = fromPgPool(fixture.pool);
    const outbox = new Outbox<SqlExecutor>(fixture.store, {
      routes: [
        { topic: `${prefix}.orders.#`, to: ['default', 'analytics', 'partner'] },
        { topic: `${prefix}.audit`, to: ['analytics'] },
      ],
    });
    const secret = newSecret();
    const relay: Relay = outbox.createRelay(createRabbitMqPublisher({ url: services.amqpUrl, exchange: rabbit.exchange }), {
      leaseMs: 3000,
      publishTimeoutMs: 1000,
      errorBackoffMs: 100,
      maxErrorBackoffMs: 400,
      destinations: {
        analytics: { publisher: createNatsPublisher({ servers: services.natsUrl, subjectPrefix: 'fan' }) },
        partner: { publisher: createWebhookPublisher({ url: partnerUrl, secret }), envelope: { headers: ['correlation-id'] } },
      },
    });
    cleanups.push(() => outbox.close());
    const enqueue = (messages: OutboxMessageInput[]) => outbox.transaction(db, (tx) => outbox.enqueueMany(tx, messages));
    return { fixture, rabbit, nats, stream, partner, outbox, relay, prefix, enqueue };
  }

  it('publishes each routed message once to every destination, in key order per destination, with the envelope each is given', async () => {
    const { fixture, rabbit, nats, stream, partner: receiver, relay, prefix, enqueue } = await rig();
    const partner = receiver as WebhookReceiver;
    relay.start();
    const messages = Array.from({ length: 60 }, (_, n): OutboxMessageInput => ({
      topic: `${prefix}.orders.created`,
      type: `n${n}`,
      key: `k${n % 6}`,
      payload: { n },
      headers: { tenant: 'acme', 'correlation-id': `c${n}` },
    }));
    const ids = await enqueue(messages);
    await enqueue([
      { topic: `${prefix}.audit`, type: 'audit', payload: {} },
      { topic: `${prefix}.other`, type: 'own', payload: {} },
    ]);
    // a plain-SQL producer names the destination of each row itself
    await fixture.pool.query(`INSERT INTO "${fixture.schema}".outbox (topic, type, payload, destination) VALUES ($1, 'plain', '{}', 'partner')`, [
      `${prefix}.orders.created`,
    ]);

    const fromRabbit = (await rabbit.waitForDeliveries(61)).map(toReceived);
    const fromPartner = (await partner.waitForRequests(61, 15_000)).map(receivedMessage);
    const fromNats = await waitFor(
      async () => {
        const read = await readStream(nats, stream);
        return read.length >= 61 ? read : undefined;
      },
      { timeoutMs: 15_000, what: '61 messages in the analytics stream' },
    );
    await waitFor(async () => ((await fixture.store.stats()).pending === 0 ? true : undefined), { timeoutMs: 10_000, what: 'an empty outbox' });

    const expected = byKey(messages.map((m) => ({ key: m.key ?? null, type: m.type })));
    expect(byKey(fromRabbit.filter((m) => m.type !== 'own'))).toEqual(expected);
    expect(byKey(fromNats.filter((m) => m.type !== 'audit'))).toEqual(expected);
    expect(byKey(fromPartner.filter((m) => m.type !== 'plain'))).toEqual(expected);
    expect(fromRabbit.map((m) => m.type)).toContain('own');
    expect(fromNats.map((m) => m.type)).toContain('audit');
    expect(fromPartner.map((m) => m.type)).toContain('plain');
    // the first destination's row keeps the id enqueue returned; the others have their own, once each
    expect(fromRabbit.find((m) => m.type === 'n0')?.id).toBe(ids[0]);
    const partnerIds = fromPartner.map((m) => m.id);
    expect(new Set(partnerIds).size).toBe(partnerIds.length);
    expect(partnerIds).not.toContain(ids[0]);
    // the partner's envelope: only correlation-id of the headers
    const first = fromPartner.find((m) => m.type === 'n0');
    expect(first?.headers['correlation-id']).toBe('c0');
    expect(first?.headers.tenant).toBeUndefined();
    expect(fromRabbit.find((m) => m.type === 'n0')?.headers.tenant).toBe('acme');
  });

  it('holds only the destination that is down: the others flow meanwhile, and it gets everything in order once back', async () => {
    const port = await closedPort();
    const { fixture, rabbit, relay, prefix, enqueue } = await rig(port);
    relay.start();
    const messages = Array.from({ length: 40 }, (_, n): OutboxMessageInput => ({
      topic: `${prefix}.orders.created`,
      type: `n${n}`,
      key: `k${n % 4}`,
      payload: { n },
    }));
    for (const batch of [messages.slice(0, 20), messages.slice(20)]) await enqueue(batch);

    // RabbitMQ gets all 40 while nothing listens at the partner's port (connection refused: unavailable)
    const fromRabbit = (await rabbit.waitForDeliveries(40)).map(toReceived);
    expect(byKey(fromRabbit)).toEqual(byKey(messages.map((m) => ({ key: m.key ?? null, type: m.type }))));
    const held = await waitFor(
      async () => {
        const rows = await fixture.store.listPending?.({ limit: 100, destination: 'partner' });
        return rows?.some((m) => /^destination missing since .*OUTBOXER_BROKER_UNAVAILABLE/.test(m.lastError ?? '')) ? rows : undefined;
      },
      { timeoutMs: 10_000, what: 'partner rows held for the outage' },
    );
    expect(held.every((m) => m.attempts === 0)).toBe(true); // an outage uses up no attempt
    expect(relay.health().broker).toBe('connected'); // the relay's own broker is fine, and it kept publishing

    const partner = await WebhookReceiver.start(() => ({ status: 204 }), port);
    cleanups.push(() => partner.close());
    const accepted = (await partner.waitForRequests(40, 20_000)).map(receivedMessage);
    await waitFor(async () => ((await fixture.store.stats()).pending === 0 ? true : undefined), { timeoutMs: 10_000, what: 'an empty outbox' });
    expect(byKey(accepted)).toEqual(byKey(messages.map((m) => ({ key: m.key ?? null, type: m.type }))));
    expect(await fixture.store.listDead(10)).toEqual([]);
  });

  it('stores the rows of the plain-SQL example of docs/fan-out.md, one per destination, as the relay reads them', async () => {
    const fixture = await createPostgresFixture();
    cleanups.push(() => fixture.cleanup());
    const doc = readFileSync(new URL('../../docs/fan-out.md', import.meta.url), 'utf8');
    const sql = /```sql\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(sql).toContain('INSERT INTO outbox');
    const client = await fixture.pool.connect();
    try {
      await client.query(`SET search_path TO "${fixture.schema}"`);
      await client.query(sql ?? '');
    } finally {
      client.release();
    }
    const rows = await fixture.store.listPending?.({ limit: 10 });
    expect(rows?.map(({ topic, key, destination }) => ({ topic, key, destination }))).toEqual([
      { topic: 'orders.created', key: 'order-7', destination: null },
      { topic: 'orders.created', key: 'order-7', destination: 'partner' },
    ]);
  });
});
