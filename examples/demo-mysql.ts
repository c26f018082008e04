import { MysqlInboxStore } from '../src/stores/mysql/inbox/mysql-inbox-store.js';
import { ConfigurationError, redactUrl } from '../src/index.js';
import { mysqlCheckError } from '../src/stores/mysql/connection-errors.js';
import { fromMysqlPool, type MysqlExecutor, type MysqlQueryable } from '../src/stores/mysql/database.js';
import { MysqlOutboxStore } from '../src/stores/mysql/mysql-store.js';
import { quoteMysql } from '../src/stores/mysql/table-names.js';
import { atDatabase, type DemoDatabase } from './demo-database.js';

/**
 * The demo on MariaDB or MySQL, in the database the URL names. This run's tables are `<name>` (the outbox, with
 * its `<name>_*` side tables), `<name>_inbox`, `<name>_orders` and `<name>_shipments`; `close` drops them.
 */
export async function openMysqlDemo(url: string, name: string): Promise<DemoDatabase<MysqlExecutor, MysqlQueryable>> {
  const mysql = await import('mysql2/promise');
  const pool = mysql.createPool({ uri: url.replace(/^mariadb:/i, 'mysql:'), connectionLimit: 4, supportBigNumbers: true, bigNumberStrings: true });
  pool.on('connection', (connection) => connection.on('error', () => undefined));
  const database = fromMysqlPool(pool, { ownsPool: true });
  const store = new MysqlOutboxStore(database, { table: name });
  let server: Record<string, unknown> | undefined;
  try {
    [server] = (await database.query('SELECT DATABASE() AS db, VERSION() AS version')).rows;
  } catch (error) {
    await database.close();
    throw atDatabase(mysqlCheckError(error, store.tableNames), url);
  }
  if (server?.db === null || server?.db === undefined) {
    await database.close();
    throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `${redactUrl(url)} names no database: add one to the URL, e.g. mysql://root@127.0.0.1:3306/test`);
  }
  const version = String(server.version);
  const describe = `${/mariadb/i.test(version) ? 'MariaDB' : 'MySQL'} ${version.split('-')[0] ?? version} ${redactUrl(url)}`;

  const ofThisRun = (column: string) => `(${column} = ? OR LEFT(${column}, ?) = ?)`;
  const runParams = [name, name.length + 1, `${name}_`];
  const bookkeeping = quoteMysql('outboxer_migrations');
  const tablesOfThisRun = async () =>
    (await database.query(`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND ${ofThisRun('table_name')}`, runParams)).rows.map((row) => String(row.name));
  let bookkeepingExisted = true;
  /** Drops this run's tables and its bookkeeping rows (and the bookkeeping table when this run made it and it is empty). */
  const dropRun = async () => {
    const tables = await tablesOfThisRun();
    if (tables.length > 0) await database.query(`DROP TABLE IF EXISTS ${tables.map(quoteMysql).join(', ')}`);
    if (!(await database.query(`SELECT 1 FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'outboxer_migrations'`)).rows.length) return;
    await database.query(`DELETE FROM ${bookkeeping} WHERE ${ofThisRun('table_name')}`, runParams);
    // under the migrations' lock: a migration elsewhere may be about to record itself in the bookkeeping table
    if (bookkeepingExisted) return;
    await database.session(async (session) => {
      const { rows } = await session.query('SELECT GET_LOCK(?, 10) AS locked', [store.tableNames.migrationLock]);
      if (Number(rows[0]?.locked) !== 1) return;
      try {
        if ((await session.query(`SELECT 1 FROM ${bookkeeping} LIMIT 1`)).rows.length === 0) await session.query(`DROP TABLE ${bookkeeping}`);
      } finally {
        await session.query('SELECT RELEASE_LOCK(?)', [store.tableNames.migrationLock]);
      }
    });
  };
  const orders = quoteMysql(`${name}_orders`);
  const shipments = quoteMysql(`${name}_shipments`);
  const inboxStore = new MysqlInboxStore(database, { table: `${name}_inbox` });
  try {
    bookkeepingExisted = (await database.query(`SELECT 1 FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'outboxer_migrations'`)).rows.length > 0;
    await store.migrate();
    await database.query(`CREATE TABLE ${orders} (order_no INT PRIMARY KEY, total_cents INT NOT NULL) ENGINE=InnoDB`);
    await inboxStore.migrate();
    await database.query(`CREATE TABLE ${shipments} (order_no INT NOT NULL, event_id CHAR(36) NOT NULL) ENGINE=InnoDB`);
  } catch (error) {
    await dropRun().catch(() => undefined);
    await store.close();
    throw atDatabase(mysqlCheckError(error, store.tableNames), url);
  }

  return {
    describe,
    place: `tables ${name}*`,
    store,
    inboxStore,
    transaction: (work) => database.transaction(work),
    async insertOrder(tx, orderNo, totalCents) {
      await tx.query(`INSERT INTO ${orders} (order_no, total_cents) VALUES (?, ?)`, [orderNo, totalCents]);
    },
    async insertShipment(tx, orderNo, eventId) {
      await tx.query(`INSERT INTO ${shipments} (order_no, event_id) VALUES (?, ?)`, [orderNo, eventId]);
    },
    async shipped() {
      return Number((await database.query(`SELECT COUNT(*) AS n FROM ${shipments}`)).rows[0]?.n);
    },
    async close(keep) {
      const where = `database ${String(server?.db)}`;
      try {
        if (!keep) await dropRun();
      } finally {
        await store.close();
      }
      return keep ? `kept tables ${name}* in ${where} (--keep)` : `dropped tables ${name}* from ${where}`;
    },
  };
}
