/**
 * docs/orms/knex.md: a Knex transaction writes an order and its event, run through outbox.transaction so the
 * relays wake once Knex committed. Run: DATABASE_URL=postgres://... npx tsx examples/orms/knex.ts
 */
import { pathToFileURL } from 'node:url';
// #region docs/orms/knex.md
import knex from 'knex';
import { Outbox } from 'outboxer';
import { fromKnex } from 'outboxer/knex';
import { fromPgPool, PostgresOutboxStore } from 'outboxer/postgres';
import pg from 'pg';

export async function main(databaseUrl = process.env.DATABASE_URL ?? 'postgres://localhost/app'): Promise<string> {
  const db = knex({ client: 'pg', connection: databaseUrl });
  if (!(await db.schema.hasTable('orders'))) {
    // your migrations' job
    await db.schema.createTable('orders', (table) => {
      table.integer('id').primary();
      table.text('note').notNullable();
    });
  }
  const pool = new pg.Pool({ connectionString: databaseUrl });
  const store = new PostgresOutboxStore(fromPgPool(pool));
  await store.migrate(); // or apply `npx outboxer sql` yourself
  const outbox = new Outbox(store);

  try {
    // Knex runs the transaction; outbox.transaction wakes this process's relays once it committed
    return await outbox.transaction(() =>
      db.transaction(async (trx) => {
        await trx('orders').insert({ id: 42, note: 'two lamps' });
        return outbox.enqueue(fromKnex(trx), {
          topic: 'orders.placed',
          type: 'order.placed',
          key: 'order-42',
          payload: { orderId: 42 },
        });
      }),
    );
  } finally {
    await db.destroy();
    await pool.end();
  }
}
// #endregion

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) console.log(JSON.stringify({ id: await main() }));
