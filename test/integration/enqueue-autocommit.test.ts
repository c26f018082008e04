import { PGlite } from '@electric-sql/pglite';
import { afterEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/core/outbox.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { fromPglite } from '../../src/stores/postgres/pglite.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { createPostgresFixture, type PostgresFixture } from '../support/postgres-fixture.js';

const message = { topic: 'orders.paid', type: 'order.paid', payload: { orderId: 1 } };
const refused = { code: 'OUTBOXER_NOT_IN_TRANSACTION', message: expect.stringContaining('BEGIN ... COMMIT') };

/** A pool commits each statement on its own: an enqueue on it would outlive the caller's rollback (I1). */
describe('enqueue on an autocommit handle', () => {
  let fixture: PostgresFixture | undefined;
  afterEach(async () => {
    await fixture?.cleanup();
    fixture = undefined;
  });

  it('refuses a pg.Pool and a fromPgPool handle, in the types and at run time, and stores nothing', async () => {
    fixture = await createPostgresFixture();
    const outbox = new Outbox<SqlExecutor>(fixture.store);
    // @ts-expect-error a pg.Pool is not a transaction
    await expect(outbox.enqueue(fixture.pool, message)).rejects.toMatchObject(refused);
    // @ts-expect-error nor is the database handle that runs transactions
    await expect(outbox.enqueueMany(fromPgPool(fixture.pool), [message])).rejects.toMatchObject(refused);
    expect((await fixture.store.stats()).pending).toBe(0);

    const client = await fixture.pool.connect();
    try {
      await client.query('BEGIN');
      await outbox.enqueue(client, message);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    await fromPgPool(fixture.pool).transaction((tx) => outbox.enqueue(tx, message));
    expect((await fixture.store.stats()).pending).toBe(2);
  });

  it('refuses a PGlite instance and takes its transaction', async () => {
    const db = new PGlite();
    try {
      const store = new PostgresOutboxStore(fromPglite(db));
      await store.migrate();
      const outbox = new Outbox(store);
      // @ts-expect-error the PGlite instance commits each statement on its own
      await expect(outbox.enqueue(db, message)).rejects.toMatchObject(refused);
      await db.transaction((tx) => outbox.enqueue(tx, message));
      expect((await store.stats()).pending).toBe(1);
    } finally {
      await db.close();
    }
  });
});
