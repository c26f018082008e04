import type { SqlExecutor } from '../../src/stores/postgres/database.js';
import { PostgresOutboxStore } from '../../src/stores/postgres/postgres-store.js';
import { pgliteSchema, postgresSchema, type SchemaDatabase } from '../support/schema-databases.js';
import { postgresTestControls } from './postgres-test-controls.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { SqlStoreHarness, TableRefusals } from './store-harness.js';
import { describeStoreBodyConformance } from './store-body-conformance.js';
import { describeStoreConformance } from './store-conformance.js';

/** PostgreSQL's own words: its header check names the header and the JSON type it got. */
const postgresRefusals: TableRefusals = {
  headerNotString: (name, kind) => new RegExp(`outbox header "${name}" must be a string; got a JSON ${kind}`),
  headersNotObject: /outbox headers must be a JSON object of string values; got a JSON array/,
  oneBody: /one_body/,
  contentType: /content_type_valid/,
  payloadNotJson: /json/i,
};

function harness(name: string, open: (prefix: string) => Promise<SchemaDatabase>): SqlStoreHarness<SqlExecutor> {
  return {
    name,
    async setup(options = {}) {
      const { schema, database, sql, cleanup } = await open('conf');
      const store = new PostgresOutboxStore(database, { schema, ...options });
      await store.migrate();
      const controls = postgresTestControls(sql, schema);
      return { store, table: `"${schema}"."outbox"`, transaction: (work) => database.transaction(work), sql, controls, refusals: postgresRefusals, cleanup };
    },
  };
}

describeStoreConformance(harness('PostgreSQL (pg)', postgresSchema));
describeStoreConformance(harness('PGlite (embedded)', pgliteSchema));
describeStoreBodyConformance(harness('PostgreSQL (pg)', postgresSchema));
describeStoreBodyConformance(harness('PGlite (embedded)', pgliteSchema));

describe.each([
  ['PostgreSQL (pg)', postgresSchema],
  ['PGlite (embedded)', pgliteSchema],
])('%s store: storage settings', (_name, open) => {
  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await cleanup?.();
    cleanup = undefined;
  });

  it('packs pages full (the default fillfactor): rows are inserted, then deleted, never claimed in place as engine v1 did', async () => {
    const e = await harness('', open).setup();
    cleanup = e.cleanup;
    const rows = await e.sql(`SELECT reloptions FROM pg_class WHERE oid = '${e.table}'::regclass`);
    expect(rows[0]?.reloptions).toBeNull();
  });
});
