import { PostgresInboxStore } from '../../src/stores/postgres/inbox/postgres-inbox-store.js';
import { pgliteSchema, postgresSchema, type SchemaDatabase } from '../support/schema-databases.js';
import { describeInboxConformance, type InboxHarness } from './inbox-conformance.js';

function harness(name: string, open: (prefix: string) => Promise<SchemaDatabase>): InboxHarness {
  return {
    name,
    async setup() {
      const { schema, database, sql, cleanup } = await open('inbox');
      const store = new PostgresInboxStore(database, { schema });
      await store.migrate();
      return { store, schema, storeWith: (options) => new PostgresInboxStore(database, { schema, ...options }), sql, cleanup };
    },
  };
}

describeInboxConformance(harness('PostgreSQL (pg)', postgresSchema));
describeInboxConformance(harness('PGlite (embedded)', pgliteSchema));
