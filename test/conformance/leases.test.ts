import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { pgliteSchema, postgresSchema, type SchemaDatabase } from '../support/schema-databases.js';
import type { LeaseHarness } from './lease-harness.js';
import { describeLeaseConformance } from './lease-conformance.js';
import { postgresLeaseControls } from './postgres-lease-controls.js';

function harness(name: string, open: (prefix: string) => Promise<SchemaDatabase>, concurrent: boolean): LeaseHarness {
  return {
    name,
    concurrent,
    async setup() {
      const { schema, database, sql, cleanup } = await open('lease');
      const store = new PostgresOutboxStore(database, { schema });
      await store.migrate();
      return { leases: store.leases, controls: postgresLeaseControls(sql, schema, concurrent ? { database } : {}), cleanup };
    },
  };
}

describeLeaseConformance(harness('PostgreSQL (pg)', postgresSchema, true));
describeLeaseConformance(harness('PGlite (embedded)', pgliteSchema, false));
