import { afterEach, describe, expect, it } from 'vitest';
import { freshMysqlDatabase, recordingMysqlDatabase, type FreshMysqlDatabase } from '../support/mysql-database.js';
import { mysqlRelayWithRows } from '../support/mysql-relay-rows.js';

/** The partitions each kind of branch of the recorded read statement names (`(SELECT <partition> AS partition_no, '<source>'`). */
function branches(statements: readonly string[], source: 'fresh' | 'due'): number[] {
  const read = statements.find((sql) => sql.includes("'fresh' AS source")) ?? '';
  return [...read.matchAll(new RegExp(`\\(SELECT (\\d+) AS partition_no, '${source}' AS source`, 'g'))].map((m) => Number(m[1])).sort((a, b) => a - b);
}

describe('MariaDB read: a due branch only where a row is scheduled', () => {
  let fresh: FreshMysqlDatabase | undefined;
  afterEach(async () => {
    await fresh?.cleanup();
    fresh = undefined;
  });

  it('plans due branches for the partitions holding a scheduled row, none for the others, and returns the due rows only', async () => {
    fresh = await freshMysqlDatabase('branches');
    const statements: string[] = [];
    const database = recordingMysqlDatabase(fresh.database, statements);
    const { store, relayId, requests } = await mysqlRelayWithRows(fresh, { name: 'branches', count: 12, key: (i) => `k${i}`, database });
    statements.length = 0;
    const first = await store.reader.read(relayId, 64, requests);
    expect(first.messages).toHaveLength(12);
    const busy = [...new Set(first.messages.map((m) => m.partition))].sort((a, b) => a - b);
    expect(branches(statements, 'fresh')).toEqual(busy);
    expect(branches(statements, 'due')).toEqual([]);

    // one row due now (an operator's retry writes due_at = now), one scheduled an hour out: their partitions get due branches
    const [due, later] = first.messages.filter((m, i, all) => all.findIndex((o) => o.partition === m.partition) === i);
    if (due === undefined || later === undefined) throw new Error('rows of two partitions');
    await fresh.sql('UPDATE outbox SET due_at = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND WHERE id = ?', [due.id]);
    await fresh.sql('UPDATE outbox SET due_at = UTC_TIMESTAMP(6) + INTERVAL 1 HOUR WHERE id = ?', [later.id]);
    statements.length = 0;
    const second = await store.reader.read(relayId, 64, requests);
    expect(branches(statements, 'due')).toEqual([due.partition, later.partition].sort((a, b) => a - b));
    expect(second.messages.filter((m) => m.source === 'due').map((m) => m.id)).toEqual([due.id]);
    expect(second.messages.map((m) => m.id)).not.toContain(later.id);
  });
});
