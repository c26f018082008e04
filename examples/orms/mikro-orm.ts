/**
 * docs/orms/mikro-orm.md: a MikroORM transaction writes an order and its event, run through outbox.transaction so
 * the relays wake once MikroORM committed. Run: DATABASE_URL=postgres://... npx tsx examples/orms/mikro-orm.ts
 */
import { pathToFileURL } from 'node:url';
// #region docs/orms/mikro-orm.md
import { EntitySchema, MikroORM } from '@mikro-orm/postgresql';
import { Outbox } from 'outboxer';
import { fromMikroOrm } from 'outboxer/mikro-orm';
import { fromPgPool, PostgresOutboxStore } from 'outboxer/postgres';
import pg from 'pg';

const Order = new EntitySchema<{ id: number; note: string }>({
  name: 'Order',
  tableName: 'orders',
  properties: { id: { type: 'integer', primary: true, autoincrement: false }, note: { type: 'text' } },
});

const databaseUrl = process.env.DATABASE_URL ?? 'postgres://localhost/app';
const orm = await MikroORM.init({ clientUrl: databaseUrl, entities: [Order] });
const pool = new pg.Pool({ connectionString: databaseUrl }); // the outbox's relays use their own pool
const store = new PostgresOutboxStore(fromPgPool(pool));
await store.migrate(); // or apply `npx outboxer sql` yourself
const outbox = new Outbox(store);

export async function placeOrder(id: number, note: string): Promise<string> {
  // MikroORM runs the transaction and flushes the order before its COMMIT; outbox.transaction wakes this
  // process's relays once it committed. Pass the em the callback gets: orm.em itself is refused.
  return outbox.transaction(() =>
    orm.em.transactional(async (em) => {
      em.create(Order, { id, note });
      return outbox.enqueue(fromMikroOrm(em), {
        topic: 'orders.placed',
        type: 'order.placed',
        key: `order-${id}`,
        payload: { orderId: id, note },
      });
    }),
  );
}
// #endregion

/** Places order 42 and returns its message's id; closes the outbox, MikroORM and the pool. */
export async function main(): Promise<string> {
  await orm.em.getConnection().execute('CREATE TABLE IF NOT EXISTS orders (id integer PRIMARY KEY, note text NOT NULL)'); // your migrations' job
  try {
    return await placeOrder(42, 'two lamps');
  } finally {
    await outbox.close();
    await orm.close();
    await pool.end();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) console.log(JSON.stringify({ id: await main() }));
