import { DeleteQueueCommand } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/core/outbox.js';
import type { Relay } from '../../src/core/relay.js';
import { createSqsPublisher } from '../../src/brokers/sqs/index.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { checkDeliveries } from '../support/order-checker.js';
import { v2Timing } from '../support/partition-relay-fixture.js';
import { createPostgresFixture } from '../support/postgres-fixture.js';
import { uniqueName } from '../support/services.js';
import { createQueue, emulatorOptions, fromSqsMessage, queueReader, sqsAdmin, useFauxqs } from '../support/sqs-harness.js';
import { waitFor } from '../support/wait-for.js';

const timing = { ...v2Timing, leaseMs: 9000, publishTimeoutMs: 3000, errorBackoffMs: 50, maxErrorBackoffMs: 400 } as const;

describe('relays -> SQS FIFO queue (fauxqs) end to end', () => {
  const fauxqs = useFauxqs();
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('carries messages over many keys through 2 batching relays: none lost, none twice, in key order', async () => {
    const fixture = await createPostgresFixture();
    cleanups.push(() => fixture.cleanup());
    const admin = sqsAdmin(fauxqs().endpoint);
    const queue = await createQueue(admin, `${uniqueName('relay')}.fifo`);
    cleanups.push(async () => {
      await admin.send(new DeleteQueueCommand({ QueueUrl: queue.url }));
      admin.destroy();
    });
    const outbox = new Outbox<SqlExecutor>(fixture.store);
    for (let i = 0; i < 2; i++) {
      const relay: Relay = outbox.createRelay(
        createSqsPublisher({ ...emulatorOptions(fauxqs().endpoint), queueUrl: queue.url, publishTimeoutMs: 2500 }),
        timing,
      );
      cleanups.push(() => relay.stop());
      relay.start();
    }
    const db = fromPgPool(fixture.pool);
    const expected: { id: string; key: string | null }[] = [];
    await Promise.all(
      Array.from({ length: 3 }, async (_, writer) => {
        for (let txn = 0; txn < 10; txn++) {
          const batch = Array.from({ length: 10 }, (_, i) => ({
            topic: 'orders.changed',
            type: 'order.changed',
            key: i === 9 ? undefined : `order-${writer}-${(txn + i) % 7}`,
            payload: { writer, txn, i },
          }));
          const ids = await outbox.transaction(db, (tx) => outbox.enqueueMany(tx, batch));
          ids.forEach((id, i) => expected.push({ id, key: batch[i]?.key ?? null }));
        }
      }),
    );
    const delivered = (await queueReader(admin, queue.url)(expected.length, 60_000)).map((raw) => fromSqsMessage(raw).id);
    await waitFor(async () => (await fixture.pool.query(`SELECT count(*)::int AS n FROM "${fixture.schema}".outbox`)).rows[0]?.n === 0, {
      what: 'every row completed',
    });
    expect(checkDeliveries(expected, delivered)).toEqual({ lost: [], phantom: [], duplicates: 0, orderInversions: 0 });
    const batched = fauxqs().requests.filter((request) => request.action === 'SendMessageBatch');
    expect(batched.some((request) => request.entries > 1)).toBe(true);
  });
});
