import { redactUrl } from '../src/index.js';
import { fromPgPool, type PgDatabase, type SqlExecutor } from '../src/stores/postgres/database.js';
import { fromPglite } from '../src/stores/postgres/pglite.js';
import { PostgresOutboxStore } from '../src/stores/postgres/postgres-store.js';
import { PostgresInboxStore } from '../src/consumer/postgres/inbox-postgres-store.js';

export interface DemoDatabase {
  readonly describe: string;
  readonly store: PostgresOutboxStore;
  readonly inboxStore: PostgresInboxStore;
  readonly ordersTable: string;
  /** The consumer side's business table: one row per order shipped. */
  readonly shipmentsTable: string;
  /** The demo's own schema: a fresh one per run, so runs never meet. */
  readonly schema: string;
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /** Drops the schema (unless `keep`) and closes the connections. */
  close(keep: boolean): Promise<void>;
}

/** PGlite in memory by default; real PostgreSQL when a URL is given (a fresh demo schema either way). */
export async function openDemoDatabase(url: string | undefined, schema: string): Promise<DemoDatabase> {
  let database: PgDatabase;
  let describe: string;
  if (url === undefined || url === '') {
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
  await store.migrate();
  const ordersTable = `${schema}.orders`;
  await database.query(`CREATE TABLE ${ordersTable} (order_no int PRIMARY KEY, total_cents int NOT NULL)`);
  const inboxStore = new PostgresInboxStore(database, { schema });
  await inboxStore.migrate();
  const shipmentsTable = `${schema}.shipments`;
  await database.query(`CREATE TABLE ${shipmentsTable} (order_no int NOT NULL, event_id uuid NOT NULL)`);
  return {
    describe,
    store,
    inboxStore,
    ordersTable,
    shipmentsTable,
    schema,
    transaction: (work) => database.transaction(work),
    async close(keep) {
      if (!keep) await database.query(`DROP SCHEMA ${schema} CASCADE`);
      await store.close();
    },
  };
}
