import { CompiledQuery, type Transaction } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Inbox } from '../../src/consumer/inbox.js';
import { MessageRegistry, type MessageHandler } from '../../src/consumer/message-registry.js';
import { withOrmTransactions } from '../../src/consumer/with-orm-transactions.js';
import { cliEnv, startScript } from '../support/cli-runner.js';
import { handmadeOrm, kysely, rigs, type OrmUnderTest, type Rig, type Shop } from '../support/consumer-orm-rigs.js';
import { freshDatabase, type FreshDatabase } from '../support/fresh-services.js';
import { describeInboxBatchConformance } from '../conformance/inbox-batch-conformance.js';
import { describeInboxConformance, type InboxHarness, message } from '../conformance/inbox-conformance.js';

function describeOrmHandlers<OrmTx>(rigName: string, open: () => Promise<Rig>, orm: OrmUnderTest<OrmTx>): void {
  describe(`inbox handlers writing through ${orm.name} on ${rigName}`, () => {
    let rig: Rig | undefined;
    afterEach(async () => {
      await rig?.cleanup();
      rig = undefined;
    });

    async function setup() {
      rig = await open();
      const r = rig;
      const { table, param: p } = r.sqlDialect;
      const entrySql = `SELECT state, attempts, last_error FROM ${table('outbox_inbox')} WHERE consumer = ${p(1)} AND message_id = ${p(2)}`;
      const entry = async (id: string) => (await r.sql(entrySql, ['billing', id]))[0];
      const payments = async (id: string) =>
        (await r.sql(`SELECT amount FROM ${table('payments')} WHERE message_id = ${p(1)}`, [id])).map((row) => Number(row.amount));
      const inbox = (options: { registry?: MessageRegistry<OrmTx> } = {}) =>
        new Inbox(withOrmTransactions<OrmTx>(r.store, orm.options(r)), {
          consumer: 'billing',
          retry: { baseDelayMs: 10, maxDelayMs: 20, jitter: 0 },
          ...options,
        });
      return { r, entrySql, entry, payments, inbox };
    }

    it("commits the handler's business row with the inbox entry, in the handler's own transaction", async () => {
      const { r, entrySql, entry, payments, inbox } = await setup();
      const during: unknown[] = [];
      const registry = new MessageRegistry<OrmTx>().register('invoice.paid', z.object({ amount: z.number() }), async (m, tx) => {
        await orm.pay(r, tx, m.id, m.payload.amount);
        // the ORM's transaction sees the entry claimed; outside it, neither the entry nor the payment exists yet
        during.push({ inside: await orm.read(tx, entrySql, ['billing', m.id]), outside: { entry: await entry(m.id), payments: await payments(m.id) } });
      });
      const m = message({ type: 'invoice.paid', topic: 'invoices', payload: { amount: 1250 } });
      expect(await inbox({ registry }).handle(m)).toEqual({ status: 'processed', attempts: 1 });
      expect(during).toEqual([{ inside: [{ state: 'processed', attempts: 1, last_error: null }], outside: { entry: undefined, payments: [] } }]);
      expect(await payments(m.id)).toEqual([1250]);
      expect(await entry(m.id)).toEqual({ state: 'processed', attempts: 1, last_error: null });
      if (r.dialect === 'postgres') {
        // xmin: the transaction that wrote each row; one value means one commit
        const writers = await r.sql(
          `SELECT (SELECT xmin::text FROM "${r.schema}".payments WHERE message_id = $1) AS payment, (SELECT xmin::text FROM "${r.schema}".outbox_inbox WHERE message_id = $1) AS entry`,
          [m.id],
        );
        expect(writers[0]?.payment).toBe(writers[0]?.entry);
      }
    });

    it('rolls back the business row and the claim of a throwing handler, counts the attempt, and commits the retry', async () => {
      const { r, entry, payments, inbox } = await setup();
      const m = message({ type: 'invoice.paid', topic: 'invoices' });
      const declined: MessageHandler<OrmTx> = async (msg, tx) => {
        await orm.pay(r, tx, msg.id, 1);
        throw new Error('card declined');
      };
      expect(await inbox().handle(m, declined)).toMatchObject({ status: 'retry', attempts: 1, error: 'Error: card declined' });
      expect(await payments(m.id)).toEqual([]);
      expect(await entry(m.id)).toEqual({ state: 'failed', attempts: 1, last_error: 'Error: card declined' });
      expect(await inbox().handle(m, async (msg, tx) => orm.pay(r, tx, msg.id, 2))).toEqual({ status: 'processed', attempts: 2 });
      expect(await payments(m.id)).toEqual([2]);
      expect(await entry(m.id)).toMatchObject({ state: 'processed', attempts: 2 });
    });

    it('runs nothing for a copy already processed, delivered again or at once', async () => {
      const { r, payments, inbox } = await setup();
      let runs = 0;
      const pay: MessageHandler<OrmTx> = async (msg, tx) => {
        runs++;
        await orm.pay(r, tx, msg.id, 5);
      };
      const m = message({ type: 'invoice.paid', topic: 'invoices' });
      expect(await inbox().handle(m, pay)).toEqual({ status: 'processed', attempts: 1 });
      expect(await inbox().handle({ ...m, deliveryCount: 2 }, pay)).toEqual({ status: 'duplicate', state: 'processed' });
      expect(runs).toBe(1);
      const copies = message({ type: 'invoice.paid', topic: 'invoices' });
      const consumer = inbox();
      const outcomes = await Promise.all(Array.from({ length: 4 }, () => consumer.handle(copies, pay)));
      expect(outcomes.map((o) => o.status).sort()).toEqual(['duplicate', 'duplicate', 'duplicate', 'processed']);
      expect(runs).toBe(2);
      expect([await payments(m.id), await payments(copies.id)]).toEqual([[5], [5]]);
    });
  });
}

for (const { name, open } of rigs) {
  describeOrmHandlers(name, open, kysely);
  describeOrmHandlers(name, open, handmadeOrm);
}

/** The whole inbox conformance suite, batches included, over Kysely's transactions, on each database. */
for (const { name, open } of rigs) {
  const harness: InboxHarness<Transaction<Shop>> = {
    name: `${name} through Kysely transactions (withOrmTransactions)`,
    async setup() {
      const r = await open();
      const options = kysely.options(r);
      return {
        store: withOrmTransactions<Transaction<Shop>>(r.store, options),
        schema: r.schema,
        storeWith: (storeOptions) => withOrmTransactions<Transaction<Shop>>(r.storeWith(storeOptions), options),
        sql: (text, params) => r.sql(text, params),
        dialect: {
          ...r.sqlDialect,
          async write(trx, sql, params) {
            await trx.executeQuery(CompiledQuery.raw(sql, [...params]));
          },
        },
        cleanup: () => r.cleanup(),
      };
    },
  };
  describeInboxConformance(harness);
  describeInboxBatchConformance(harness);
}

/** examples/consumer-orm.ts, the snippet of docs/consumer.md, run as a user runs it on a PostgreSQL database of its own. */
describe('the consumer ORM example', () => {
  let database: FreshDatabase | undefined;
  afterEach(async () => {
    await database?.drop();
    database = undefined;
  });

  it("applies order.paid once through Kysely's transaction, committed with the inbox entry", async () => {
    database = await freshDatabase();
    const run = await startScript('examples/consumer-orm.ts', [], cliEnv({ DATABASE_URL: database.url })).waitForExit(30_000);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    const { id, outcomes } = JSON.parse(run.stdout) as { id: string; outcomes: string[] };
    expect(outcomes).toEqual(['processed', 'duplicate']);
    const invoice = await database.pool.query<{ paid_at: string; xmin: string }>('SELECT paid_at, xmin::text AS xmin FROM invoices WHERE order_id = 42');
    const entry = await database.pool.query<{ consumer: string; state: string; attempts: number; xmin: string }>(
      'SELECT consumer, state, attempts, xmin::text AS xmin FROM outbox_inbox WHERE message_id = $1',
      [id],
    );
    expect(invoice.rows).toEqual([{ paid_at: '2025-01-31T10:00:00Z', xmin: expect.any(String) }]);
    // the invoice's update and the inbox entry: written by one transaction
    expect(entry.rows).toEqual([{ consumer: 'billing', state: 'processed', attempts: 1, xmin: invoice.rows[0]?.xmin }]);
  });
});
