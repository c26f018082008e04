/** The README's PGlite snippet: the same store over embedded Postgres, no server. */
// #region README.md
import { PGlite } from '@electric-sql/pglite';
import { Outbox } from 'outboxer';
import { PostgresOutboxStore, fromPglite } from 'outboxer/pglite';

const db = new PGlite(); // in memory; new PGlite('./data') keeps it on disk
await db.exec('CREATE TABLE orders (id int PRIMARY KEY)');
const store = new PostgresOutboxStore(fromPglite(db));
await store.migrate();
const outbox = new Outbox(store);
await db.transaction(async (tx) => {
  await tx.query('INSERT INTO orders (id) VALUES ($1)', [42]);
  await outbox.enqueue(tx, { topic: 'orders.created', type: 'order.created', key: 'order-42', payload: { id: 42 } });
});
// #endregion

console.log(JSON.stringify(await store.stats()));
await db.close();
