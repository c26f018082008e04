/**
 * docs/orms/drizzle.md: a Drizzle transaction writes an order and its event, run through outbox.transaction so the
 * relays wake once Drizzle committed. Run: DATABASE_URL=postgres://... npx tsx examples/orms/drizzle.ts
 */
import { pathToFileURL } from 'node:url';
// #region docs/orms/drizzle.md
import { drizzle } from 'drizzle-orm/node-postgres';
import { integer, pgTable, text } from 'drizzle-orm/pg-core';
import { Outbox } from 'outboxer';
import { fromDrizzle } from 'outboxer/drizzle';
import { fromPgPool, PostgresOutboxStore } from 'outboxer/postgres';
import pg from 'pg';

const orders = pgTable('orders', { id: integer().primaryKey(), note: text().notNull() });

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL }); // Drizzle and the outbox can share it
const db = drizzle({ client: pool });
const store = new PostgresOutboxStore(fromPgPool(pool));
await store.migrate(); // or apply `npx outboxer sql` yourself
const outbox = new Outbox(store);

export async function placeOrder(id: number, note: string): Promise<string> {
  // Drizzle runs the transaction; outbox.transaction wakes this process's relays once it committed
  return outbox.transaction(() =>
    db.transaction(async (tx) => {
      await tx.insert(orders).values({ id, note });
      return outbox.enqueue(fromDrizzle(tx), {
        topic: 'orders.placed',
        type: 'order.placed',
        key: `order-${id}`,
        payload: { orderId: id, note },
      });
    }),
  );
}
// #endregion

/** Places order 42 and returns its message's id; closes the outbox and ends the pool. */
export async function main(): Promise<string> {
  await pool.query('CREATE TABLE IF NOT EXISTS orders (id integer PRIMARY KEY, note text NOT NULL)'); // your migrations' job
  try {
    return await placeOrder(42, 'two lamps');
  } finally {
    await outbox.close();
    await pool.end();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) console.log(JSON.stringify({ id: await main() }));
