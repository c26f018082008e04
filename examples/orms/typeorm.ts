/**
 * docs/orms/typeorm.md: a TypeORM transaction writes an order and its event, run through outbox.transaction so the
 * relays wake once TypeORM committed. Run: DATABASE_URL=postgres://... npx tsx examples/orms/typeorm.ts
 */
import { pathToFileURL } from 'node:url';
// #region docs/orms/typeorm.md
import { Outbox } from 'outboxer';
import { fromPgPool, PostgresOutboxStore } from 'outboxer/postgres';
import { fromTypeOrm } from 'outboxer/typeorm';
import pg from 'pg';
import { DataSource, EntitySchema } from 'typeorm';

const Order = new EntitySchema<{ id: number; note: string }>({
  name: 'Order',
  tableName: 'orders',
  columns: { id: { type: Number, primary: true }, note: { type: String } },
});

const url = process.env.DATABASE_URL ?? 'postgres://localhost/app';
const dataSource = await new DataSource({ type: 'postgres', url, entities: [Order] }).initialize();
const pool = new pg.Pool({ connectionString: url }); // for the outbox's relays
const store = new PostgresOutboxStore(fromPgPool(pool));
await store.migrate(); // or apply `npx outboxer sql` yourself
const outbox = new Outbox(store);

export async function placeOrder(id: number, note: string): Promise<string> {
  // TypeORM runs the transaction; outbox.transaction wakes this process's relays once it committed
  return outbox.transaction(() =>
    dataSource.transaction(async (manager) => {
      await manager.insert(Order, { id, note });
      return outbox.enqueue(fromTypeOrm(manager), {
        topic: 'orders.placed',
        type: 'order.placed',
        key: `order-${id}`,
        payload: { orderId: id, note },
      });
    }),
  );
}
// #endregion

/** Places order 42 and returns its message's id; closes the outbox, TypeORM and the pool. */
export async function main(): Promise<string> {
  await dataSource.query('CREATE TABLE IF NOT EXISTS orders (id integer PRIMARY KEY, note text NOT NULL)'); // your migrations' job
  try {
    return await placeOrder(42, 'two lamps');
  } finally {
    await outbox.close();
    await dataSource.destroy();
    await pool.end();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) console.log(JSON.stringify({ id: await main() }));
