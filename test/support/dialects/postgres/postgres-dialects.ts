import { PostgresInboxStore } from '../../../../src/stores/postgres/inbox/postgres-inbox-store.js';
import { GAUGE_EXACT_LIMIT } from '../../../../src/stores/postgres/gauges-sql.js';
import { PostgresOutboxStore } from '../../../../src/stores/postgres/postgres-store.js';
import type { InboxHarness } from '../../../conformance/inbox-conformance.js';
import type { TableRefusals } from '../../../conformance/store-harness.js';
import { pgliteSchema, postgresSchema, type SchemaDatabase } from '../../schema-databases.js';
import type { TestDialect } from '../test-dialect.js';
import { postgresLeaseControls } from './postgres-lease-controls.js';
import { postgresReaderControls } from './postgres-reader-controls.js';
import { postgresTestControls } from './postgres-test-controls.js';

/** PostgreSQL's own words: its header check names the header and the JSON type it got. */
const postgresRefusals: TableRefusals = {
  headerNotString: (name, kind) => new RegExp(`outbox header "${name}" must be a string; got a JSON ${kind}`),
  headersNotObject: /outbox headers must be a JSON object of string values; got a JSON array/,
  oneBody: /one_body/,
  contentType: /content_type_valid/,
  payloadNotJson: /json/i,
};

/** The PostgreSQL store over `open`'s schemas: real PostgreSQL through pg, or PGlite (one session, not concurrent). */
function postgresDialect(name: string, open: (prefix: string) => Promise<SchemaDatabase>, concurrent: boolean): TestDialect {
  async function migrated(prefix: string, options: { retainPublishedMs?: number } = {}) {
    const opened = await open(prefix);
    const store = new PostgresOutboxStore(opened.database, { schema: opened.schema, ...options });
    await store.migrate();
    return { ...opened, store };
  }
  const inbox: InboxHarness = {
    batches: true,
    name,
    async setup() {
      const { schema, database, sql, cleanup } = await open('inbox');
      const store = new PostgresInboxStore(database, { schema });
      await store.migrate();
      return { store, schema, storeWith: (options) => new PostgresInboxStore(database, { schema, ...options }), sql, cleanup };
    },
  };
  return {
    name,
    concurrent,
    store: {
      name,
      async setup(options = {}) {
        const { schema, database, sql, cleanup, store } = await migrated('conf', options);
        const controls = postgresTestControls(sql, schema);
        return { store, table: `"${schema}"."outbox"`, transaction: (work) => database.transaction(work), sql, controls, refusals: postgresRefusals, cleanup };
      },
    },
    gauges: {
      name,
      async setup(options = {}) {
        const { schema, database, sql, cleanup, store } = await migrated('gauges', options);
        return { store, transaction: (work) => database.transaction(work), controls: postgresTestControls(sql, schema), cleanup };
      },
    },
    gaugeExactLimit: GAUGE_EXACT_LIMIT,
    reader: {
      name,
      concurrent,
      async setup(options = {}) {
        const { schema, database, sql, cleanup, store } = await migrated('reader', options);
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
    },
    lease: {
      name,
      concurrent,
      async setup() {
        const { schema, database, sql, cleanup, store } = await migrated('lease');
        return { leases: store.leases, controls: postgresLeaseControls(sql, schema, concurrent ? { database } : {}), cleanup };
      },
    },
    operator: {
      name,
      async setup() {
        const { schema, database, sql, cleanup, store } = await migrated('operator');
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
    },
    withInbox: (use) => use(inbox),
  };
}

export const postgresTestDialect = postgresDialect('PostgreSQL (pg)', postgresSchema, true);
export const pgliteTestDialect = postgresDialect('PGlite (embedded)', pgliteSchema, false);
