/** The README's SQLite snippet: the outbox in a SQLite file (better-sqlite3), no server. */
// #region README.md
import { Outbox } from 'outboxer';
import { openSqliteStore } from 'outboxer/sqlite';

const store = await openSqliteStore(process.env.SQLITE_FILE ?? './app.db'); // WAL mode; created when missing
await store.migrate();
const outbox = new Outbox(store);
const db = store.database; // runs your async work in BEGIN IMMEDIATE ... COMMIT (ROLLBACK when it throws)
db.handle.exec('CREATE TABLE IF NOT EXISTS orders (id INTEGER PRIMARY KEY)');
await outbox.transaction(db, async (tx) => {
  tx.prepare('INSERT INTO orders (id) VALUES (?)').run(42);
  await outbox.enqueue(tx, { topic: 'orders.created', type: 'order.created', key: 'order-42', payload: { id: 42 } });
});
// #endregion

console.log(JSON.stringify(await store.stats()));
await store.close();
