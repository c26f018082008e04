import { afterEach, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/core/outbox.js';
import { fromPgPool, type SqlExecutor } from '../../src/stores/postgres/database.js';
import { createV1PostgresFixture } from '../support/engine-v1-table.js';
import type { PostgresFixture } from '../support/postgres-fixture.js';

describe('concurrent claims (PostgreSQL, engine v1)', () => {
  let fixture: PostgresFixture | undefined;
  afterEach(async () => {
    await fixture?.cleanup();
    fixture = undefined;
  });

  it('skips the heads another claim is locking and takes the next ones', async () => {
    fixture = await createV1PostgresFixture();
    const { pool, schema, store } = fixture;
    const outbox = new Outbox<SqlExecutor>(store);
    const ids = await fromPgPool(pool).transaction((tx) =>
      outbox.enqueueMany(tx, Array.from({ length: 40 }, (_, i) => ({ topic: 't', type: 'x', key: `k${i % 20}`, payload: i }))),
    );
    const other = await pool.connect();
    try {
      // Another claim in progress: it has locked the ten oldest heads and not committed yet.
      await other.query('BEGIN');
      await other.query(`SELECT seq FROM "${schema}".outbox ORDER BY seq LIMIT 10 FOR UPDATE`);
      const claim = await store.claim({ owner: 'second', leaseMs: 30_000, limit: 10, maxKeys: 10 });
      expect(claim.messages.map((m) => m.id)).toEqual(ids.slice(10, 20));
    } finally {
      await other.query('ROLLBACK');
      other.release();
    }
  });
});
