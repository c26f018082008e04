import mysql from 'mysql2/promise';
import { afterEach, describe, expect, it } from 'vitest';
import { Inbox } from '../../src/consumer/inbox.js';
import { MysqlInboxStore } from '../../src/stores/mysql/inbox/mysql-inbox-store.js';
import type { ReceivedMessage } from '../../src/consumer/received-message.js';
import { fromMysqlPool, type MysqlPoolLike, type MysqlQueryable } from '../../src/stores/mysql/database.js';
import { freshMysqlDatabase, type FreshMysqlDatabase } from '../support/mysql-database.js';
import { message } from '../conformance/inbox-conformance.js';

describe('MariaDB inbox: the handler writes with tx.query in the inbox transaction', () => {
  let fresh: FreshMysqlDatabase | undefined;
  const pools: mysql.Pool[] = [];
  afterEach(async () => {
    for (const pool of pools.splice(0)) await pool.end();
    await fresh?.cleanup();
    fresh = undefined;
  });

  async function setup() {
    fresh = await freshMysqlDatabase('inbox_handler');
    await fresh.sql('CREATE TABLE invoices (message_id CHAR(36) NOT NULL PRIMARY KEY, amount INT NOT NULL)');
    const store = new MysqlInboxStore(fresh.database);
    await store.migrate();
    const invoices = async () => (await fresh!.sql('SELECT message_id, amount FROM invoices')).map((row) => ({ ...row, amount: Number(row.amount) }));
    const entries = async () => fresh!.sql('SELECT consumer, message_id, state, attempts FROM outbox_inbox');
    return { fresh, store, invoices, entries };
  }

  const writeInvoice = (calls: { n: number }, fail: boolean) => async (m: ReceivedMessage, tx: MysqlQueryable) => {
    calls.n++;
    const [header] = await tx.query('INSERT INTO invoices (message_id, amount) VALUES (?, ?)', [m.id, (m.payload as { n: number }).n]);
    expect((header as { affectedRows: number }).affectedRows).toBe(1);
    if (fail) throw new Error('ledger refused the invoice');
  };

  it('rolls back the row a failing handler wrote and leaves no processed entry, only a failed attempt', async () => {
    const { store, invoices, entries } = await setup();
    const inbox = new Inbox(store, { consumer: 'billing', retry: { baseDelayMs: 10, maxDelayMs: 20, jitter: 0, maxAttempts: 5 } });
    const m = message({ payload: { n: 42 } });
    const calls = { n: 0 };
    expect(await inbox.handle(m, writeInvoice(calls, true))).toMatchObject({ status: 'retry', attempts: 1, error: 'Error: ledger refused the invoice' });
    expect(calls.n).toBe(1);
    expect(await invoices()).toEqual([]);
    expect(await entries()).toEqual([{ consumer: 'billing', message_id: m.id, state: 'failed', attempts: 1 }]);
    expect(await store.stats('billing')).toEqual({ processed: 0, failed: 1, dead: 0 });
  });

  it('handles a message once: a second delivery of a processed message does not run the handler', async () => {
    const { store, invoices, entries } = await setup();
    const inbox = new Inbox(store, { consumer: 'billing' });
    const m = message({ payload: { n: 7 } });
    const calls = { n: 0 };
    expect(await inbox.handle(m, writeInvoice(calls, false))).toEqual({ status: 'processed', attempts: 1 });
    expect(await inbox.handle({ ...m, deliveryCount: 2 }, writeInvoice(calls, false))).toEqual({ status: 'duplicate', state: 'processed' });
    expect(calls.n).toBe(1);
    expect(await invoices()).toEqual([{ message_id: m.id, amount: 7 }]);
    expect(await entries()).toEqual([{ consumer: 'billing', message_id: m.id, state: 'processed', attempts: 1 }]);
  });

  it('applies copies delivered at once to two processes (two pools) once', async () => {
    const { fresh, store, invoices } = await setup();
    const otherPool = mysql.createPool({ uri: fresh.url, connectionLimit: 4 });
    pools.push(otherPool);
    const other = new MysqlInboxStore(fromMysqlPool(otherPool as unknown as MysqlPoolLike));
    const inboxes = [new Inbox(store, { consumer: 'billing' }), new Inbox(other, { consumer: 'billing' })];
    const m = message({ payload: { n: 3 } });
    const calls = { n: 0 };
    const outcomes = await Promise.all(Array.from({ length: 8 }, (_, i) => inboxes[i % 2]!.handle(m, writeInvoice(calls, false))));
    expect(outcomes.filter((o) => o.status === 'processed')).toHaveLength(1);
    expect(outcomes.filter((o) => o.status === 'duplicate')).toHaveLength(7);
    expect(calls.n).toBe(1);
    expect(await invoices()).toEqual([{ message_id: m.id, amount: 3 }]);
  });
});
