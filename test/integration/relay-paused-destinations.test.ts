import { afterEach, describe, expect, it } from 'vitest';
import type { OutboxMessageInput } from '../../src/core/message.js';
import { Outbox } from '../../src/core/outbox.js';
import type { Relay } from '../../src/core/relay.js';
import { createRabbitMqPublisher } from '../../src/brokers/rabbitmq/rabbitmq-publisher.js';
import { createWebhookPublisher } from '../../src/brokers/webhook/webhook-publisher.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { createPostgresFixture } from '../support/postgres-fixture.js';
import { isolatedExchange, recordingLogger, toReceived } from '../support/rabbitmq-harness.js';
import { services } from '../support/services.js';
import { waitFor } from '../support/wait-for.js';
import { newSecret, receivedMessage, WebhookReceiver } from '../support/webhook-harness.js';

/** Per key, the message types in the order a destination received them; unkeyed ones (no order promised) sorted, under ''. */
function byKey(messages: readonly { readonly key: string | null; readonly type: string }[]): Map<string, string[]> {
  const keys = new Map<string, string[]>();
  for (const m of messages) keys.set(m.key ?? '', [...(keys.get(m.key ?? '') ?? []), m.type]);
  keys.get('')?.sort();
  return keys;
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

/**
 * An operator pauses one destination of a fan-out (docs/fan-out.md, "Pausing a destination"): its rows are held,
 * uncounted, with the operator's reason, while the other destination keeps flowing from the same relay; after the
 * resume it gets everything in key order.
 */
describe('an operator pause of a whole destination', () => {
  it('holds only the partner rows (attempts 0, last_error says why) while RabbitMQ gets everything; after the resume the partner gets all in key order', async () => {
    // retained published rows: their attempts can be read after they went out
    const fixture = await createPostgresFixture({ retainPublishedMs: 3_600_000 });
    cleanups.push(() => fixture.cleanup());
    const rabbit = await isolatedExchange();
    cleanups.push(() => rabbit.cleanup());
    const partner = await WebhookReceiver.start();
    cleanups.push(() => partner.close());
    const prefix = rabbit.topic('x').split('.')[0] as string;
    const logger = recordingLogger();
    const outbox = new Outbox<SqlExecutor>(fixture.store, { routes: [{ topic: `${prefix}.#`, to: ['default', 'partner'] }] });
    cleanups.push(() => outbox.close());
    // lease 3 s: the relay reads the lists of pauses every second (min(5 s, lease/3)); holds of 100 ms doubling to 400 ms
    const relay: Relay = outbox.createRelay(createRabbitMqPublisher({ url: services.amqpUrl, exchange: rabbit.exchange }), {
      leaseMs: 3000,
      publishTimeoutMs: 1000,
      pollIntervalMs: 20,
      maxPollIntervalMs: 100,
      errorBackoffMs: 100,
      maxErrorBackoffMs: 400,
      logger,
      destinations: { partner: { publisher: createWebhookPublisher({ url: partner.url(), secret: newSecret() }) } },
    });
    cleanups.push(() => relay.stop());
    const enqueue = (messages: OutboxMessageInput[]) => outbox.transaction(fromPgPool(fixture.pool), (tx) => outbox.enqueueMany(tx, messages));
    const round = (r: number) =>
      Array.from({ length: 16 }, (_, n): OutboxMessageInput => ({
        topic: `${prefix}.${n % 2 === 0 ? 'orders.created' : 'billing.paid'}`,
        type: `r${r}n${n}`,
        key: n % 8 === 7 ? undefined : `k${n % 4}`,
        payload: { r, n },
      }));

    // Messages stored before the pause reaches the relay, and after.
    const messages = round(0);
    await enqueue(messages);
    expect(await fixture.store.pauseDestination('partner', 'partner maintenance, INC-12')).toBe(true);
    relay.start();
    await waitFor(() => relay.health().pausedDestinations.some((d) => d.destination === 'partner' && d.by === 'operator'), {
      what: 'the relay to read the pause',
    });
    for (const r of [1, 2]) {
      const more = round(r);
      messages.push(...more);
      await enqueue(more);
    }
    const expected = byKey(messages.map((m) => ({ key: m.key ?? null, type: m.type })));

    // The relay's own destination gets every message meanwhile; the partner none.
    const fromRabbit = (await rabbit.waitForDeliveries(messages.length)).map(toReceived);
    expect(byKey(fromRabbit)).toEqual(expected);
    const partnerRows = () =>
      fixture.pool.query<{ state: string; attempts: number; last_error: string | null }>(
        `SELECT state, attempts, last_error FROM "${fixture.schema}".outbox WHERE destination = 'partner' ORDER BY seq`,
      );
    const held = await waitFor(
      async () => {
        const { rows } = await partnerRows();
        return rows.length === messages.length && rows.every((row) => row.last_error !== null) ? rows : undefined;
      },
      { what: 'every partner row to be held' },
    );
    for (const row of held) expect(row).toEqual({ state: 'pending', attempts: 0, last_error: 'paused by an operator: partner maintenance, INC-12' });
    expect(partner.requests).toEqual([]);
    expect(relay.health().pausedTopics).toEqual(['*@partner']);
    expect(logger.lines.some((line) => line.includes('"destination":"partner"') && line.includes('destination paused by an operator'))).toBe(true);

    // The resume: everything goes out, in key order, and no row counted an attempt.
    expect(await fixture.store.resumeDestination('partner')).toBe(true);
    const fromPartner = (await partner.waitForRequests(messages.length, 15_000)).map(receivedMessage);
    expect(byKey(fromPartner)).toEqual(expected);
    await waitFor(async () => (await partnerRows()).rows.every((row) => row.state === 'published'), { what: 'every partner row marked published' });
    expect((await partnerRows()).rows.every((row) => row.attempts === 0)).toBe(true);
    await waitFor(() => relay.health().pausedDestinations.length === 0, { what: 'the relay to read the resume' });
    expect(logger.lines.some((line) => line.includes('destination resumed by an operator'))).toBe(true);
  });
});
