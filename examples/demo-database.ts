import type { InboxStore } from '../src/core/ports/inbox-store.js';
import type { OutboxStore } from '../src/core/ports.js';
import { OutboxerError, redactUrl } from '../src/index.js';
import { databaseCheckError } from '../src/stores/postgres/connection-errors.js';
import { fromPgPool, type PgDatabase, type SqlExecutor } from '../src/stores/postgres/database.js';
import { fromPglite } from '../src/stores/postgres/pglite.js';
import { PostgresOutboxStore } from '../src/stores/postgres/postgres-store.js';
import { PostgresInboxStore } from '../src/stores/postgres/inbox/postgres-inbox-store.js';

/**
 * One run's database: the outbox and inbox stores, the two services' business tables, and the little SQL the
 * demo writes itself, in the database's dialect. `Tx` is the order service's transaction, `InboxTx` the one
 * the inbox hands the shipping handler.
 */
export interface DemoDatabase<Tx = unknown, InboxTx = unknown> {
  readonly describe: string;
  /** Where this run's tables are, fresh per run so runs never meet: `schema outboxer_demo_1a2b3c`, `tables outboxer_demo_1a2b3c*`. */
  readonly place: string;
  readonly store: OutboxStore<Tx>;
  readonly inboxStore: InboxStore<InboxTx>;
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /** The order service's own row, in its transaction. */
  insertOrder(tx: Tx, orderNo: number, totalCents: number): Promise<void>;
  /** The shipping service's own row, in the inbox's transaction. */
  insertShipment(tx: InboxTx, orderNo: number, eventId: string): Promise<void>;
  /** Orders shipped so far (rows in the shipments table). */
  shipped(): Promise<number>;
  /** Removes what the run created (unless `keep`) and closes the connections; returns what it did, for the last line. */
  close(keep: boolean): Promise<string>;
}

/**
 * PGlite in memory when no URL is given; otherwise the URL's scheme picks the database: `postgres://`,
 * `mysql://` (or `mariadb://`), `sqlite:<file>`. `name` names this run's schema or tables. A setup that fails
 * half-way removes what it made and closes its connections before it throws, worded as the relay's start
 * check words it (a code, the fix) with the redacted URL.
 */
export async function openDemoDatabase(url: string | undefined, name: string): Promise<DemoDatabase> {
  if (url === undefined || url === '') return openPostgresDemo(undefined, name);
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  switch (scheme) {
    case 'postgres':
    case 'postgresql':
      return openPostgresDemo(url, name);
    case 'sqlite':
      return (await import('./demo-sqlite.js')).openSqliteDemo(url, name);
    case 'mysql':
    case 'mariadb':
      return (await import('./demo-mysql.js')).openMysqlDemo(url, name);
    default:
      throw new Error(`--database takes postgres://…, mysql://… (or mariadb://…) or sqlite:<file>; got ${scheme === undefined ? 'no scheme' : `${scheme}:`}`);
  }
}

/** A failure to set the demo up in the database at `url`: its code and message, and which database. */
export function atDatabase(error: OutboxerError, url: string): OutboxerError {
  return new OutboxerError(error.code, `${error.message} (database ${redactUrl(url)})`, { cause: error });
}

/** PGlite in memory without a URL, real PostgreSQL with one; a fresh schema either way. */
async function openPostgresDemo(url: string | undefined, schema: string): Promise<DemoDatabase<SqlExecutor, SqlExecutor>> {
  let database: PgDatabase;
  let describe: string;
  if (url === undefined) {
    const { PGlite } = await import('@electric-sql/pglite');
    const db = new PGlite();
    database = fromPglite(db, { ownsDatabase: true });
    describe = 'PGlite (embedded, in memory)';
  } else {
    const { default: pg } = await import('pg');
    const { safePoolConfig } = await import('../src/stores/postgres/pool.js');
    const pool = new pg.Pool(safePoolConfig({ connectionString: url, applicationName: 'outboxer-demo' }));
    pool.on('error', () => undefined);
    database = fromPgPool(pool, { ownsPool: true });
    describe = `PostgreSQL ${redactUrl(url)}`;
  }
  const store = new PostgresOutboxStore(database, { schema });
  const ordersTable = `${schema}.orders`;
  const shipmentsTable = `${schema}.shipments`;
  const inboxStore = new PostgresInboxStore(database, { schema });
  try {
    await store.migrate();
    await database.query(`CREATE TABLE ${ordersTable} (order_no int PRIMARY KEY, total_cents int NOT NULL)`);
    await inboxStore.migrate();
    await database.query(`CREATE TABLE ${shipmentsTable} (order_no int NOT NULL, event_id uuid NOT NULL)`);
  } catch (error) {
    await database.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await store.close().catch(() => undefined);
    throw url === undefined ? error : atDatabase(databaseCheckError(error, { schema, table: 'outbox' }), url);
  }
  return {
    describe,
    place: `schema ${schema}`,
    store,
    inboxStore,
    transaction: (work) => database.transaction(work),
    async insertOrder(tx, orderNo, totalCents) {
      await tx.query(`INSERT INTO ${ordersTable} (order_no, total_cents) VALUES ($1, $2)`, [orderNo, totalCents]);
    },
    async insertShipment(tx, orderNo, eventId) {
      await tx.query(`INSERT INTO ${shipmentsTable} (order_no, event_id) VALUES ($1, $2)`, [orderNo, eventId]);
    },
    async shipped() {
      const result = await database.transaction((tx) => tx.query(`SELECT count(*)::int AS n FROM ${shipmentsTable}`, []));
      return (result.rows[0] as { n: number }).n;
    },
    async close(keep) {
      if (!keep) await database.query(`DROP SCHEMA ${schema} CASCADE`);
      await store.close();
      return keep ? `kept schema ${schema} (--keep)` : `dropped schema ${schema}`;
    },
  };
}
