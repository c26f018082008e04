import pg from 'pg';
import { createJsonLogger, Outbox, type Relay } from 'outboxer';
import { fromPgPool, PostgresOutboxStore, type SqlExecutor } from 'outboxer/postgres';

/** What the publisher pages take as given: a logger and an outbox (on DATABASE_URL, table public.outbox). */
export const logger = createJsonLogger('warn');
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
const db = fromPgPool(pool);
const store = new PostgresOutboxStore(db);
await store.migrate();
export const outbox = new Outbox<SqlExecutor>(store);

/** Starts the relay, commits one message, waits until it is published, then shuts everything down. */
export async function relayOneMessage(relay: Relay): Promise<void> {
  relay.start();
  await outbox.transaction(db, (tx) => outbox.enqueue(tx, { topic: 'orders.created', type: 'order.created', key: 'order-1', payload: { id: 1 } }));
  for (;;) {
    const { pending, scheduled } = await store.stats();
    if (pending + scheduled === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await outbox.close();
  await pool.end();
}
