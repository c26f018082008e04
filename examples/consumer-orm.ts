/**
 * docs/consumer.md, "Handlers that write through an ORM": the inbox runs each message in a Kysely transaction and
 * claims it there, so the handler writes through Kysely's own `trx`. Run: DATABASE_URL=postgres://... npx tsx examples/consumer-orm.ts
 */
import { pathToFileURL } from 'node:url';
import type { ReceivedMessage } from 'outboxer/consumer';
// #region docs/consumer.md
import { Kysely, PostgresDialect, type Transaction } from 'kysely';
import pg from 'pg';
import { z } from 'zod';
import { Inbox, MessageRegistry, PostgresInboxStore, withOrmTransactions } from 'outboxer/consumer';
import { fromKysely } from 'outboxer/kysely';
import { fromPgPool } from 'outboxer/postgres';

interface Database {
  invoices: { order_id: number; paid_at: string | null };
}

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL }); // Kysely and the inbox can share it
const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
const inboxStore = new PostgresInboxStore(fromPgPool(pool));
await inboxStore.migrate();

// Each message runs in a Kysely transaction; the inbox claims it in that same transaction
const store = withOrmTransactions<Transaction<Database>>(inboxStore, {
  transaction: (work) => db.transaction().execute(work),
  adapt: fromKysely,
});

const registry = new MessageRegistry<Transaction<Database>>()
  .register('order.paid', z.object({ orderId: z.number(), paidAt: z.string() }), async (message, trx) => {
    // trx is Kysely's own transaction: this write commits with the inbox entry, or rolls back with it
    await trx.updateTable('invoices').set({ paid_at: message.payload.paidAt }).where('order_id', '=', message.payload.orderId).execute();
  });

export const inbox = new Inbox(store, { consumer: 'billing', registry });
// hand `inbox` to createRabbitMqConsumer / createNatsConsumer as above
// #endregion

/**
 * Hands one `order.paid` to the inbox twice, as a broker that redelivers it would, and returns both outcomes;
 * closes Kysely (which ends the pool).
 */
export async function main(): Promise<{ id: string; outcomes: string[] }> {
  await db.schema.createTable('invoices').ifNotExists().addColumn('order_id', 'integer', (c) => c.primaryKey()).addColumn('paid_at', 'text').execute();
  await db.insertInto('invoices').values({ order_id: 42, paid_at: null }).onConflict((c) => c.doNothing()).execute();
  const message: ReceivedMessage = {
    id: '0190d5a8-7c1e-7000-8000-000000000042',
    topic: 'orders.paid',
    type: 'order.paid',
    key: 'order-42',
    headers: {},
    payload: { orderId: 42, paidAt: '2025-01-31T10:00:00Z' },
    contentType: 'application/json',
    deliveryCount: 1,
  };
  try {
    const first = await inbox.handle(message);
    const copy = await inbox.handle({ ...message, deliveryCount: 2 });
    return { id: message.id, outcomes: [first.status, copy.status] };
  } finally {
    await db.destroy();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) console.log(JSON.stringify(await main()));
