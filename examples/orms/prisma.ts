/**
 * docs/orms/prisma.md: a Prisma interactive transaction writes an order and its event, run through outbox.transaction
 * so the relays wake once Prisma committed. Prisma 7 with the `prisma-client` generator and the pg driver adapter;
 * the client is generated from the schema in docs/orms/prisma.md into ./generated/prisma (gitignored here:
 * `npx tsx test/support/prisma/prisma-clients.ts` makes it). Run: DATABASE_URL=postgres://... npx tsx examples/orms/prisma.ts
 */
import { pathToFileURL } from 'node:url';
// #region docs/orms/prisma.md
import { PrismaPg } from '@prisma/adapter-pg';
import { Outbox } from 'outboxer';
import { fromPgPool, PostgresOutboxStore } from 'outboxer/postgres';
import { fromPrisma } from 'outboxer/prisma';
import pg from 'pg';
import { PrismaClient } from './generated/prisma/client.js';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL }); // Prisma's driver adapter and the outbox can share it
const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
const store = new PostgresOutboxStore(fromPgPool(pool));
await store.migrate(); // or apply `npx outboxer sql` yourself
const outbox = new Outbox(store);

export async function placeOrder(id: number, note: string): Promise<string> {
  // Prisma runs the transaction; outbox.transaction wakes this process's relays once it committed
  return outbox.transaction(() =>
    prisma.$transaction(async (tx) => {
      await tx.order.create({ data: { id, note } });
      return outbox.enqueue(fromPrisma(tx), {
        topic: 'orders.placed',
        type: 'order.placed',
        key: `order-${id}`,
        payload: { orderId: id, note },
      });
    }),
  );
}
// #endregion

/** Places order 42 and returns its message's id; closes the outbox, Prisma and the pool. */
export async function main(): Promise<string> {
  await pool.query('CREATE TABLE IF NOT EXISTS orders (id integer PRIMARY KEY, note text NOT NULL)'); // your migrations' job
  try {
    return await placeOrder(42, 'two lamps');
  } finally {
    await outbox.close();
    await prisma.$disconnect(); // a pool passed to PrismaPg stays open: it is yours
    await pool.end();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) console.log(JSON.stringify({ id: await main() }));
