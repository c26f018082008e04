import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { pgliteSchema, postgresSchema, type SchemaDatabase } from '../support/schema-databases.js';
import { describeOperatorConformance, type OperatorHarness } from './operator-conformance.js';
import { describePendingConformance } from './pending-conformance.js';
import { postgresLeaseControls } from './postgres-lease-controls.js';
import { postgresTestControls } from './postgres-test-controls.js';

function harness(name: string, open: (prefix: string) => Promise<SchemaDatabase>): OperatorHarness {
  return {
    name,
    async setup() {
      const { schema, database, sql, cleanup } = await open('operator');
      const store = new PostgresOutboxStore(database, { schema });
      await store.migrate();
      return {
        operator: store,
        leases: store.leases,
        reader: store.reader,
        enqueue: (messages) => database.transaction(async (tx) => void (await store.insert(tx, messages))),
        controls: postgresTestControls(sql, schema),
        leaseControls: postgresLeaseControls(sql, schema),
        cleanup,
      };
    },
  };
}

for (const each of [harness('PostgreSQL (pg)', postgresSchema), harness('PGlite (embedded)', pgliteSchema)]) {
  describeOperatorConformance(each);
  describePendingConformance(each);
}
