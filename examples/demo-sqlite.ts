import { existsSync, rmSync } from 'node:fs';
import { SqliteInboxStore } from '../src/stores/sqlite/inbox/sqlite-inbox-store.js';
import { quoteIdentifier } from '../src/core/identifiers.js';
import type { SqliteHandle } from '../src/stores/sqlite/database.js';
import { openSqliteStore } from '../src/stores/sqlite/open-sqlite.js';
import type { DemoDatabase } from './demo-database.js';

/** `sqlite:./demo.db` -> `./demo.db`; `sqlite:/tmp/demo.db` and `sqlite:///tmp/demo.db` -> `/tmp/demo.db` (as the CLI reads it). */
function sqlitePath(url: string): string {
  const rest = decodeURIComponent(url.slice('sqlite:'.length).split('?')[0] ?? '');
  const path = rest.startsWith('//') ? rest.slice(2) : rest;
  if (path === '') throw new Error('a SQLite URL names a file: --database sqlite:./demo.db');
  return path;
}

/**
 * The demo in a SQLite file (created if missing), on one connection: the store's. This run's tables are
 * `<name>` (the outbox, with its `<name>_*` side tables), `<name>_inbox`, `<name>_orders` and `<name>_shipments`.
 * `close` drops them, and removes the file too when this run created it and nothing else is in it.
 */
export async function openSqliteDemo(url: string, name: string): Promise<DemoDatabase<SqliteHandle, SqliteHandle>> {
  const path = sqlitePath(url);
  const fileExisted = path === ':memory:' || existsSync(path);
  const store = await openSqliteStore(path, { table: name });
  const { database } = store;
  const ofThisRun = (column: string) => `(${column} = ? OR substr(${column}, 1, ?) = ?)`;
  const runParams = [name, name.length + 1, `${name}_`];
  const bookkeepingExists = () => database.get(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'outboxer_migrations'`) !== undefined;
  let bookkeepingExisted = true;
  /** Drops this run's tables and bookkeeping rows; says whether the file holds no table any more. */
  const dropAll = () =>
    database.write(() => {
      const tables = database.all(`SELECT name FROM sqlite_master WHERE type = 'table' AND ${ofThisRun('name')}`, runParams);
      for (const table of tables) database.handle.exec(`DROP TABLE ${quoteIdentifier(String(table.name))}`);
      if (bookkeepingExists()) {
        database.run(`DELETE FROM outboxer_migrations WHERE ${ofThisRun('table_name')}`, runParams);
        if (!bookkeepingExisted && database.get('SELECT 1 FROM outboxer_migrations LIMIT 1') === undefined) database.handle.exec('DROP TABLE outboxer_migrations');
      }
      return database.get(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' LIMIT 1`) === undefined;
    });
  /** Removes the file when this run created it and nothing else is in it; says whether it did. */
  const removeFileIfOurs = (fileEmpty: boolean) => {
    if (fileExisted || !fileEmpty) return false;
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
    return true;
  };
  const orders = quoteIdentifier(`${name}_orders`);
  const shipments = quoteIdentifier(`${name}_shipments`);
  const inboxStore = new SqliteInboxStore(database, { table: `${name}_inbox` });
  try {
    bookkeepingExisted = await database.read(bookkeepingExists);
    await store.migrate();
    await database.write(() => database.handle.exec(`CREATE TABLE ${orders} (order_no INTEGER PRIMARY KEY, total_cents INTEGER NOT NULL)`));
    await inboxStore.migrate();
    await database.write(() => database.handle.exec(`CREATE TABLE ${shipments} (order_no INTEGER NOT NULL, event_id TEXT NOT NULL)`));
  } catch (error) {
    const fileEmpty = await dropAll().catch(() => false);
    await store.close();
    removeFileIfOurs(fileEmpty);
    throw error;
  }

  return {
    describe: `SQLite ${path} (embedded, ${fileExisted ? 'an existing file' : 'a new file'})`,
    place: `tables ${name}*`,
    store,
    inboxStore,
    transaction: (work) => database.transaction(work),
    async insertOrder(tx, orderNo, totalCents) {
      tx.prepare(`INSERT INTO ${orders} (order_no, total_cents) VALUES (?, ?)`).run(orderNo, totalCents);
    },
    async insertShipment(tx, orderNo, eventId) {
      tx.prepare(`INSERT INTO ${shipments} (order_no, event_id) VALUES (?, ?)`).run(orderNo, eventId);
    },
    shipped: () => database.read(() => Number(database.get(`SELECT count(*) AS n FROM ${shipments}`)?.n)),
    async close(keep) {
      if (keep) {
        await store.close();
        return `kept tables ${name}* in ${path} (--keep)`;
      }
      let fileEmpty: boolean;
      try {
        fileEmpty = await dropAll();
      } finally {
        await store.close();
      }
      return removeFileIfOurs(fileEmpty) ? `dropped tables ${name}* and removed ${path}, which this run created` : `dropped tables ${name}* from ${path}`;
    },
  };
}
