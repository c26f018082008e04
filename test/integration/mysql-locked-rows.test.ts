import { afterEach, describe, expect, it } from 'vitest';
import { freshMysqlDatabase, type FreshMysqlDatabase } from '../support/mysql-database.js';
import { mysqlRelayWithRows } from '../support/mysql-relay-rows.js';

describe('MariaDB completion beside rows another session locks', () => {
  let fresh: FreshMysqlDatabase | undefined;
  afterEach(async () => {
    await fresh?.cleanup();
    fresh = undefined;
  });

  // A table of a few rows is where the optimizer prefers a scan, and a scan that deletes waits for every locked row it meets.
  it('writes each outcome at once on a small table whose other rows an operator holds FOR UPDATE', async () => {
    fresh = await freshMysqlDatabase('locked');
    const { store, relayId, leases, requests } = await mysqlRelayWithRows(fresh, { name: 'locked', count: 6, key: (i) => `k${i}` });
    const read = await store.reader.read(relayId, 64, requests);
    const locker = await fresh.pool.getConnection();
    try {
      await locker.query('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED');
      await locker.beginTransaction();
      await locker.query('SELECT id FROM outbox WHERE id IN (?) FOR UPDATE', [read.messages.slice(0, 3).map((m) => m.id)]);
      for (const message of read.messages.slice(3)) {
        const epoch = leases.find((l) => l.partition === message.partition)?.epoch ?? '';
        const completion = store.reader.complete(relayId, [{ partition: message.partition, epoch, published: [message.id], failed: [], held: [] }]);
        const outcome = await Promise.race([completion, new Promise<'waited'>((resolve) => setTimeout(() => resolve('waited'), 5000))]);
        expect(outcome).toEqual([{ partition: message.partition, epoch, applied: true, changed: 1, skipped: [] }]);
      }
    } finally {
      await locker.rollback();
      locker.release();
    }
  });
});
