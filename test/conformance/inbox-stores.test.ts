import { afterAll } from 'vitest';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { PostgresInboxStore } from '../../src/consumer/postgres/inbox-postgres-store.js';
import { fromPgPool } from '../../src/stores/postgres/database.js';
import { fromPglite, pgliteExecutor } from '../../src/stores/postgres/pglite.js';
import { services, uniqueName } from '../support/services.js';
import { describeInboxConformance } from './inbox-conformance.js';

describeInboxConformance({
  name: 'PostgreSQL (pg)',
  async setup() {
    const schema = uniqueName('inbox');
    const pool = new pg.Pool({ connectionString: services.postgresUrl, max: 8 });
    const database = fromPgPool(pool);
    const store = new PostgresInboxStore(database, { schema });
    await store.migrate();
    return {
      store,
      schema,
      storeWith: (options) => new PostgresInboxStore(database, { schema, ...options }),
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

describeInboxConformance({
  name: 'PGlite (embedded)',
  async setup() {
    sharedPglite ??= new PGlite();
    const db = sharedPglite;
    const schema = uniqueName('inbox');
    const database = fromPglite(db);
    const store = new PostgresInboxStore(database, { schema });
    await store.migrate();
    const executor = pgliteExecutor(db);
    return {
      store,
      schema,
      storeWith: (options) => new PostgresInboxStore(database, { schema, ...options }),
      sql: async (text, params) => (await executor.query(text, params ?? [])).rows as Record<string, unknown>[],
      cleanup: async () => {
        await executor.query(`DROP SCHEMA "${schema}" CASCADE`);
      },
    };
  },
});
