import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { GAUGE_EXACT_LIMIT } from '../../src/stores/postgres/gauges-sql.js';
import { pgliteSchema, postgresSchema, type SchemaDatabase } from '../support/schema-databases.js';
import { postgresTestControls } from './postgres-test-controls.js';
import type { StoreHarness } from './store-harness.js';
import { describeStoreGaugesConformance } from './store-gauges-conformance.js';

function harness(name: string, open: (prefix: string) => Promise<SchemaDatabase>): StoreHarness {
  return {
    name,
    async setup(options = {}) {
      const { schema, database, sql, cleanup } = await open('gauges');
      const store = new PostgresOutboxStore(database, { schema, ...options });
      await store.migrate();
      return { store, transaction: (work) => database.transaction(work), controls: postgresTestControls(sql, schema), cleanup };
    },
  };
}

describeStoreGaugesConformance(harness('PostgreSQL (pg)', postgresSchema), { exactLimit: GAUGE_EXACT_LIMIT });
describeStoreGaugesConformance(harness('PGlite (embedded)', pgliteSchema), { exactLimit: GAUGE_EXACT_LIMIT });
