import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { pgliteSchema, postgresSchema, type SchemaDatabase } from '../support/schema-databases.js';
import { postgresLeaseControls } from './postgres-lease-controls.js';
import { postgresReaderControls } from './postgres-reader-controls.js';
import { describeReaderConformance } from './reader-conformance.js';
import type { ReaderHarness } from './reader-harness.js';

function harness(name: string, open: (prefix: string) => Promise<SchemaDatabase>, concurrent: boolean): ReaderHarness {
  return {
    name,
    concurrent,
    async setup(options = {}) {
      const { schema, database, sql, cleanup } = await open('reader');
      const store = new PostgresOutboxStore(database, { schema, ...options });
      await store.migrate();
      return {
        reader: store.reader,
        leases: store.leases,
        operator: store,
        enqueue: (messages) => database.transaction(async (tx) => void (await store.insert(tx, messages))),
        controls: postgresReaderControls(sql, schema, concurrent ? { database, store } : {}),
        leaseControls: postgresLeaseControls(sql, schema),
        cleanup,
      };
    },
  };
}

describeReaderConformance(harness('PostgreSQL (pg)', postgresSchema, true));
describeReaderConformance(harness('PGlite (embedded)', pgliteSchema, false));
