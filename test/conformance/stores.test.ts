import type { SqlExecutor } from '../../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { pgliteSchema, postgresSchema, type SchemaDatabase } from '../support/schema-databases.js';
import { postgresTestControls } from './postgres-test-controls.js';
import type { SqlStoreHarness } from './store-harness.js';
import { describeStoreBodyConformance } from './store-body-conformance.js';
import { describeStoreConformance } from './store-conformance.js';

function harness(name: string, open: (prefix: string) => Promise<SchemaDatabase>): SqlStoreHarness<SqlExecutor> {
  return {
    name,
    async setup(options = {}) {
      const { schema, database, sql, cleanup } = await open('conf');
      const store = new PostgresOutboxStore(database, { schema, ...options });
      await store.migrate();
      const controls = postgresTestControls(sql, schema);
      return { store, table: `"${schema}"."outbox"`, transaction: (work) => database.transaction(work), sql, controls, cleanup };
    },
  };
}

describeStoreConformance(harness('PostgreSQL (pg)', postgresSchema));
describeStoreConformance(harness('PGlite (embedded)', pgliteSchema));
describeStoreBodyConformance(harness('PostgreSQL (pg)', postgresSchema));
describeStoreBodyConformance(harness('PGlite (embedded)', pgliteSchema));
