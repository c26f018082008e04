import { afterEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/core/outbox.js';
import type { Relay } from '../../src/core/relay.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { type BrokerRig, natsRig, rabbitMqRig } from '../support/broker-rigs.js';
import { checkDeliveries } from '../support/order-checker.js';
import { createPostgresFixture, type PostgresFixture } from '../support/postgres-fixture.js';
import { waitFor } from '../support/wait-for.js';

const timing = {
  engine: 'v2',
  pollIntervalMs: 20,
  maxPollIntervalMs: 100,
  errorBackoffMs: 50,
  maxErrorBackoffMs: 200,
  leaseMs: 9000,
  publishTimeoutMs: 3000,
} as const;

describe.each([
  ['RabbitMQ', rabbitMqRig],
  ['NATS JetStream', natsRig],
])('engine v2 relays -> %s end to end', (_name, makeRig) => {
  let fixture: PostgresFixture | undefined;
  let rig: BrokerRig | undefined;
  const relays: Relay[] = [];
  afterEach(async () => {
    await Promise.all(relays.splice(0).map((r) => r.stop()));
    await rig?.cleanup();
    await fixture?.cleanup();
    fixture = undefined;
    rig = undefined;
  });

  it('carries messages over many keys through 2 relays to the broker: none lost, none twice, in key order; a plain SQL insert too', async () => {
    fixture = await createPostgresFixture();
    rig = await makeRig();
    const outbox = new Outbox<SqlExecutor>(fixture.store);
    const db = fromPgPool(fixture.pool);
    for (let i = 0; i < 2; i++) {
      const relay = outbox.createRelay(rig.publisher(), timing);
      relays.push(relay);
      relay.start();
    }
    const topic = rig.topic('orders');
    const expected: { id: string; key: string | null }[] = [];
    await Promise.all(
      Array.from({ length: 3 }, async (_, writer) => {
        for (let txn = 0; txn < 20; txn++) {
          const batch = Array.from({ length: 10 }, (_, i) => ({
            topic,
            type: 'order.changed',
            key: i === 9 ? undefined : `order-${writer}-${(txn + i) % 15}`,
            payload: { writer, txn, i },
          }));
          const ids = await outbox.transaction(db, (tx) => outbox.enqueueMany(tx, batch));
          ids.forEach((id, i) => expected.push({ id, key: batch[i]?.key ?? null }));
        }
      }),
    );
    const plain = await fixture.pool.query(
      `INSERT INTO "${fixture.schema}".outbox (topic, key, type, payload) VALUES ($1, 'sql', 'x', '{"from":"sql"}') RETURNING id::text AS id`,
      [topic],
    );
    expected.push({ id: plain.rows[0].id as string, key: 'sql' });
    const deliveries = rig.deliveries;
    await waitFor(() => new Set(deliveries).size >= expected.length, { timeoutMs: 60_000, what: `all ${expected.length} at the broker` });
    await waitFor(async () => (await fixture?.pool.query(`SELECT count(*)::int AS n FROM "${fixture.schema}".outbox`))?.rows[0]?.n === 0, {
      what: 'every row completed',
    });
    expect(checkDeliveries(expected, deliveries)).toEqual({ lost: [], phantom: [], duplicates: 0, orderInversions: 0 });
  });
});
