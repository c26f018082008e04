/**
 * The SQLite store (better-sqlite3 11 or 12, an optional peer dependency).
 *
 * @example
 * const store = await openSqliteStore('./app.db');
 * await store.migrate();
 * const outbox = new Outbox(store);
 * // the store's own connection runs the caller's transaction (BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on a throw):
 * await outbox.transaction(store.database, async (tx) => {
 *   tx.prepare('INSERT INTO orders (id) VALUES (?)').run(7);
 *   await outbox.enqueue(tx, { topic: 'orders', type: 'order.created', payload: { id: 7 } });
 * });
 * // or, on a connection of your own (fromBetterSqlite3(db) makes it a runner for outbox.transaction too):
 * db.exec('BEGIN IMMEDIATE');
 * try {
 *   db.prepare('INSERT INTO orders (id) VALUES (?)').run(8);
 *   await outbox.enqueue(db, { topic: 'orders', type: 'order.created', payload: { id: 8 } });
 *   db.exec('COMMIT');
 * } catch (error) {
 *   if (db.inTransaction) db.exec('ROLLBACK');
 *   throw error;
 * }
 * outbox.notifyCommitted();
 *
 * Not better-sqlite3's `db.transaction(fn)`: its function must be synchronous, so it commits before an
 * `await outbox.enqueue(...)` inside it settles, and an enqueue that fails could no longer roll it back.
 */
export { DEFAULT_BUSY_WAIT_MS, isBusy, prepareConnection, SqliteDatabase, type SqliteHandle, type SqliteStatementLike } from './database.js';
export { applySqliteMigrations, missingSqliteMigrations, sqliteMigrationScript } from './migration-runner.js';
export { type ResolvedSqliteMigration, SQLITE_NOW_MS, sqliteMigrations, type SqliteMigration, type SqliteSchemaSettings } from './migrations.js';
export { sqliteTableNames, type SqliteTableNames } from './table-names.js';
export { fromBetterSqlite3, openSqliteStore, type OpenSqliteOptions } from './open-sqlite.js';
export { SqliteOutboxStore, type SqliteStoreOptions } from './sqlite-store.js';
export { SqliteRelayLeases } from './leases/sqlite-relay-leases.js';
export { SqlitePartitionReader } from './reader/sqlite-partition-reader.js';
