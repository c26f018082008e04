import { describe, expect, it } from 'vitest';
import { Outbox } from '../../src/core/outbox.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { checkDeliveries } from '../support/order-checker.js';
import { v2RelayScope, v2Timing } from '../support/partition-relay-fixture.js';
import { RecordingPublisher } from '../support/recording-publisher.js';
import { waitFor } from '../support/wait-for.js';

describe('engine v2 relay and a row locked by another session', () => {
  const { relays, open } = v2RelayScope();

  it('publishes it once, does not wait for it, keeps every other key flowing, and deletes it once the lock ends', async () => {
    const f = await open();
    const outbox = new Outbox<SqlExecutor>(f.store);
    const db = fromPgPool(f.pool);
    const [locked] = await outbox.transaction(db, (tx) => outbox.enqueueMany(tx, [{ topic: 't', type: 'x', key: 'k', payload: 'locked' }]));
    const holder = await f.pool.connect();
    await holder.query('BEGIN');
    await holder.query(`SELECT 1 FROM "${f.schema}".outbox WHERE id = $1 FOR UPDATE`, [locked]);
    try {
      const publisher = new RecordingPublisher();
      const relay = outbox.createRelay(publisher, v2Timing);
      relays.push(relay);
      relay.start();
      const expected: { id: string; key: string | null }[] = [{ id: locked as string, key: 'k' }];
      for (let round = 0; round < 5; round++) {
        const batch = Array.from({ length: 10 }, (_, i) => ({ topic: 't', type: 'x', key: i === 0 ? 'k' : `o${i}`, payload: { round, i } }));
        const ids = await outbox.transaction(db, (tx) => outbox.enqueueMany(tx, batch));
        ids.forEach((id, i) => expected.push({ id, key: batch[i]?.key ?? null }));
        await waitFor(() => ids.every((id) => publisher.delivered.some((m) => m.id === id)), { what: `round ${round} delivered while the row is locked` });
      }
      const pending = async () => (await f.pool.query<{ id: string }>(`SELECT id::text AS id FROM "${f.schema}".outbox`)).rows.map((r) => r.id);
      await waitFor(async () => (await pending()).length === 1, { what: 'every row but the locked one completed' });
      expect(await pending()).toEqual([locked]);
      expect(publisher.delivered.filter((m) => m.id === locked)).toHaveLength(1);
      await holder.query('COMMIT');
      await waitFor(async () => (await pending()).length === 0, { what: 'the locked row deleted once its lock ended' });
      expect(
        checkDeliveries(
          expected,
          publisher.delivered.map((m) => m.id),
        ),
      ).toEqual({ lost: [], phantom: [], duplicates: 0, orderInversions: 0 });
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      holder.release();
    }
  });
});
