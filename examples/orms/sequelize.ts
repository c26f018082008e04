/**
 * docs/orms/sequelize.md: a Sequelize transaction writes an order and its event, run through outbox.transaction so
 * the relays wake once Sequelize committed. Run: DATABASE_URL=postgres://... npx tsx examples/orms/sequelize.ts
 */
import { pathToFileURL } from 'node:url';
// #region docs/orms/sequelize.md
import { Outbox } from 'outboxer';
import { fromPgPool, PostgresOutboxStore } from 'outboxer/postgres';
import { fromSequelize } from 'outboxer/sequelize';
import pg from 'pg';
import { DataTypes, Sequelize } from 'sequelize';

export async function main(databaseUrl = process.env.DATABASE_URL ?? 'postgres://localhost/app'): Promise<string> {
  const sequelize = new Sequelize(databaseUrl, { logging: false });
  const Order = sequelize.define(
    'Order',
    { id: { type: DataTypes.INTEGER, primaryKey: true }, note: { type: DataTypes.TEXT, allowNull: false } },
    { tableName: 'orders', timestamps: false },
  );
  await Order.sync(); // your migrations' job
  const pool = new pg.Pool({ connectionString: databaseUrl });
  const store = new PostgresOutboxStore(fromPgPool(pool));
  await store.migrate(); // or apply `npx outboxer sql` yourself
  const outbox = new Outbox(store);

  try {
    // Sequelize runs the transaction (COMMIT when the callback resolves); outbox.transaction wakes this
    // process's relays once it committed
    return await outbox.transaction(() =>
      sequelize.transaction(async (t) => {
        await Order.create({ id: 42, note: 'two lamps' }, { transaction: t });
        return outbox.enqueue(fromSequelize(t), {
          topic: 'orders.placed',
          type: 'order.placed',
          key: 'order-42',
          payload: { orderId: 42 },
        });
      }),
    );
  } finally {
    await sequelize.close();
    await pool.end();
  }
}
// #endregion

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) console.log(JSON.stringify({ id: await main() }));
