import { afterEach, describe, expect, it } from 'vitest';
import { freshMysqlDatabase, recordingMysqlDatabase, type FreshMysqlDatabase } from '../support/mysql-database.js';
import { mysqlRelayWithRows } from '../support/mysql-relay-rows.js';

const directWrites = (statements: readonly string[]) => statements.filter((sql) => sql.startsWith('SET STATEMENT innodb_lock_wait_timeout = 0 FOR DELETE'));
const rowLocks = (statements: readonly string[]) => statements.filter((sql) => sql.includes('FOR UPDATE SKIP LOCKED'));

describe('MariaDB completion of published rows, written without row locks', () => {
  let fresh: FreshMysqlDatabase | undefined;
  afterEach(async () => {
    await fresh?.cleanup();
    fresh = undefined;
  });

  async function relayWithRows(count: number, statements: string[]) {
    fresh = await freshMysqlDatabase('direct');
    const database = recordingMysqlDatabase(fresh.database, statements);
    const { store, relayId, leases, requests } = await mysqlRelayWithRows(fresh, { name: 'direct', count, key: (i) => `k${i % 3}`, database });
    const read = await store.reader.read(relayId, 64, requests);
    const completions = [...new Set(read.messages.map((m) => m.partition))].map((partition) => {
      const rows = read.messages.filter((m) => m.partition === partition);
      return {
        partition,
        epoch: leases.find((l) => l.partition === partition)?.epoch ?? '',
        published: rows.map((m) => m.id),
        publishedSeqs: rows.map((m) => m.seq),
        failed: [],
        held: [],
      };
    });
    statements.length = 0;
    return { store, relayId, read, completions };
  }

  it('deletes the usual batch in one statement that waits for no row lock, and locks no row first', async () => {
    const statements: string[] = [];
    const { store, relayId, completions } = await relayWithRows(9, statements);
    const outcomes = await store.reader.complete(relayId, completions, { partitionCount: 64 });
    expect(outcomes.map((o) => [o.applied, o.changed, o.skipped])).toEqual(completions.map((c) => [true, c.published.length, []]));
    expect(directWrites(statements)).toHaveLength(1);
    expect(rowLocks(statements)).toEqual([]);
    expect(await fresh?.sql('SELECT COUNT(*) AS n FROM outbox')).toEqual([{ n: '0' }]);
  });

  it('rolls the direct write back and skips a row another session holds, writing the rest, without waiting for it', async () => {
    const statements: string[] = [];
    const { store, relayId, read, completions } = await relayWithRows(9, statements);
    const held = read.messages[0];
    const locker = await fresh?.pool.getConnection();
    if (held === undefined || locker === undefined) throw new Error('the table has rows and the pool a connection');
    try {
      await locker.query('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED');
      await locker.beginTransaction();
      await locker.query('SELECT id FROM outbox WHERE id = ? FOR UPDATE', [held.id]);
      // the session's own innodb_lock_wait_timeout is 50 s: a completion that waited for the lock would not end in 5
      const completion = store.reader.complete(relayId, completions, { partitionCount: 64 });
      const outcomes = await Promise.race([completion, new Promise<'waited'>((resolve) => setTimeout(() => resolve('waited'), 5000))]);
      if (outcomes === 'waited') throw new Error('the completion waited for the row lock');
      expect(outcomes.flatMap((o) => o.skipped)).toEqual([held.id]);
      expect(outcomes.reduce((sum, o) => sum + o.changed, 0)).toBe(read.messages.length - 1);
      expect(directWrites(statements)).toHaveLength(1);
      expect(rowLocks(statements)).toHaveLength(1);
    } finally {
      await locker.rollback();
      locker.release();
    }
    expect(await fresh?.sql('SELECT id FROM outbox')).toEqual([{ id: held.id }]);
  });

  type Completions = Awaited<ReturnType<typeof relayWithRows>>['completions'];
  type Row = Awaited<ReturnType<typeof relayWithRows>>['read']['messages'][number];
  /** The completions with `row`'s seq replaced. */
  const withSeq = (completions: Completions, row: Row, seq: (s: string) => string): Completions =>
    completions.map((c) => ({ ...c, publishedSeqs: c.publishedSeqs.map((s, i) => (c.published[i] === row.id ? seq(s) : s)) }));
  const cases: readonly { readonly what: string; readonly stays: boolean; readonly change: (completions: Completions, row: Row) => Promise<Completions> }[] = [
    {
      what: 'a row deleted from outside since the read',
      stays: false,
      change: async (completions, row) => (await fresh?.sql('DELETE FROM outbox WHERE id = ?', [row.id]), completions),
    },
    { what: 'a seq that names another row', stays: true, change: async (completions, row) => withSeq(completions, row, (s) => `${BigInt(s) + 1000n}`) },
    { what: "the seq '0'", stays: true, change: async (completions, row) => withSeq(completions, row, () => '0') },
    {
      what: 'a row listed under another partition the relay holds',
      stays: true,
      change: async (completions, row) => {
        const other = completions.find((c) => c.partition !== row.partition);
        if (other === undefined) throw new Error('rows of two partitions');
        return completions.map((c) => {
          const keep = c.published.map((id, i) => [id, c.publishedSeqs[i] ?? ''] as const).filter(([id]) => id !== row.id);
          const moved = c === other ? [...keep, [row.id, row.seq] as const] : keep;
          return { ...c, published: moved.map(([id]) => id), publishedSeqs: moved.map(([, seq]) => seq) };
        });
      },
    },
  ];

  it.each(cases)('writes nothing directly given $what, and completes the other rows under row locks', async ({ stays, change }) => {
    const statements: string[] = [];
    const { store, relayId, read, completions } = await relayWithRows(9, statements);
    const row = read.messages[0];
    if (row === undefined) throw new Error('the read returned rows');
    const changed = await change(completions, row);
    const outcomes = await store.reader.complete(relayId, changed, { partitionCount: 64 });
    expect(outcomes.reduce((sum, o) => sum + o.changed, 0)).toBe(read.messages.length - 1);
    expect(outcomes.flatMap((o) => o.skipped)).toEqual([]);
    expect(directWrites(statements)).toHaveLength(1);
    expect(rowLocks(statements)).toHaveLength(1);
    expect(await fresh?.sql('SELECT id FROM outbox')).toEqual(stays ? [{ id: row.id }] : []);
  });
});
