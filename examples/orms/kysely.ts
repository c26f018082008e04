/**
 * docs/orms/kysely.md: a Kysely transaction writes an order and its event, run through outbox.transaction so the
 * relays wake once Kysely committed. Run: DATABASE_URL=postgres://... npx tsx examples/orms/kysely.ts
 */
import { pathToFileURL } from 'node:url';
// #region docs/orms/kysely.md, README.md
import { Kysely, PostgresDialect } from 'kysely';
import { Outbox } from 'outboxer';
import { fromKysely } from 'outboxer/kysely';
import { fromPgPool, PostgresOutboxStore } from 'outboxer/postgres';
import pg from 'pg';

interface Database {
  orders: { id: number; note: string };
}

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL }); // Kysely and the outbox can share it
const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
const store = new PostgresOutboxStore(fromPgPool(pool));
await store.migrate(); // or apply `npx outboxer sql` yourself
const outbox = new Outbox(store);

export async function placeOrder(id: number, note: string): Promise<string> {
  // Kysely runs the transaction; outbox.transaction wakes this process's relays once it committed
  return outbox.transaction(() =>
    db.transaction().execute(async (trx) => {
      await trx.insertInto('orders').values({ id, note }).execute();
      return outbox.enqueue(fromKysely(trx), {
        topic: 'orders.placed',
        type: 'order.placed',
        key: `order-${id}`,
        payload: { orderId: id, note },
      });
    }),
  );
}
// #endregion

/** Places order 42 and returns its message's id; closes the outbox and Kysely (which ends the pool). */
export async function main(): Promise<string> {
  await db.schema
    .createTable('orders')
    .ifNotExists()
    .addColumn('id', 'integer', (column) => column.primaryKey())
    .addColumn('note', 'text', (column) => column.notNull())
    .execute(); // your migrations' job
  try {
    return await placeOrder(42, 'two lamps');
  } finally {
    await outbox.close();
    await db.destroy();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) console.log(JSON.stringify({ id: await main() }));
