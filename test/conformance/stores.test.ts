import { afterAll } from 'vitest';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { fromPglite, pgliteExecutor } from '../../src/stores/postgres/pglite.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { services, uniqueName } from '../support/services.js';
import { describeStoreConformance } from './store-conformance.js';

describeStoreConformance({
  name: 'PostgreSQL (pg)',
  async setup(options = {}) {
    const schema = uniqueName('conf');
    const pool = new pg.Pool({ connectionString: services.postgresUrl, max: 4 });
    const store = new PostgresOutboxStore(fromPgPool(pool), { schema, ...options });
    await store.migrate();
    const database = fromPgPool(pool);
    return {
      store,
      table: `"${schema}"."outbox"`,
      transaction: (work) => database.transaction(work),
      sql: async (text, params) => (await pool.query(text, params)).rows,
      async cleanup() {
        await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
        await pool.end();
      },
    };
  },
});

let sharedPglite: PGlite | undefined;
afterAll(async () => {
  await sharedPglite?.close();
});

describeStoreConformance({
  name: 'PGlite (embedded)',
  async setup(options = {}) {
    sharedPglite ??= new PGlite();
    const db = sharedPglite;
    const schema = uniqueName('conf');
    const store = new PostgresOutboxStore(fromPglite(db), { schema, ...options });
    await store.migrate();
    const executor = pgliteExecutor(db);
    return {
      store,
      table: `"${schema}"."outbox"`,
      transaction: (work) => db.transaction((tx) => work(pgliteExecutor(tx))),
      sql: async (text, params) => (await executor.query(text, params ?? [])).rows as Record<string, unknown>[],
      cleanup: async () => {
        await executor.query(`DROP SCHEMA "${schema}" CASCADE`);
      },
    };
  },
});
