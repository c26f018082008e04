import { SqliteInboxStore } from '../../../../src/stores/sqlite/inbox/sqlite-inbox-store.js';
import type { SqliteHandle } from '../../../../src/stores/sqlite/database.js';
import { SqliteRelayLeases } from '../../../../src/stores/sqlite/leases/sqlite-relay-leases.js';
import { applySqliteMigrations } from '../../../../src/stores/sqlite/migration-runner.js';
import { SQLITE_NOW_MS, sqliteMigrations } from '../../../../src/stores/sqlite/migrations.js';
import { sqliteTableNames } from '../../../../src/stores/sqlite/table-names.js';
import { SqliteOutboxStore } from '../../../../src/stores/sqlite/sqlite-store.js';
import { GAUGE_EXACT_LIMIT } from '../../../../src/stores/postgres/gauges-sql.js';
import type { InboxHarness } from '../../../conformance/inbox-conformance.js';
import type { SqlStoreHarness, TableRefusals } from '../../../conformance/store-harness.js';
import { freshSqliteFile } from '../../sqlite-file.js';
import type { TestDialect } from '../test-dialect.js';
import { sqliteLeaseControls } from './sqlite-lease-controls.js';
import { sqliteReaderControls } from './sqlite-reader-controls.js';
import { sqliteTestControls } from './sqlite-test-controls.js';

const name = 'SQLite (better-sqlite3)';

const RETURNS_ROWS = /^\s*(SELECT|WITH)\b|\bRETURNING\b/i;

/** The body suite's plain SQL is PostgreSQL's: its placeholders, bytea literals and casts in SQLite's spelling. */
function sqliteSpelling(text: string): string {
  return text
    .replace(/\$\d+/g, '?') // each placeholder once, in order
    .replace(/'\\x([0-9a-fA-F]*)'::bytea/g, "X'$1'")
    .replace(/::jsonb?\b/g, '');
}

/** SQLite's words: a trigger refuses headers with non-string values, named CHECK constraints the rest. */
const sqliteRefusals: TableRefusals = {
  headerNotString: () => /outbox headers must be a JSON object of string values/,
  headersNotObject: /headers_object_of_strings/,
  oneBody: /one_body/,
  contentType: /content_type_valid/,
  payloadNotJson: /payload_json/,
};

const store: SqlStoreHarness<SqliteHandle> = {
  name,
  async setup(options = {}) {
    const file = freshSqliteFile('conf');
    const database = file.database();
    const store = new SqliteOutboxStore(database, options);
    await store.migrate();
    const plain = file.database();
    return {
      store,
      table: store.tableNames.outbox,
      transaction: (work) => database.transaction(work),
      sql: (text, params = []) => {
        const sql = sqliteSpelling(text);
        return plain.write(() => (RETURNS_ROWS.test(sql) ? plain.all(sql, params) : (plain.run(sql, params), [])));
      },
      controls: sqliteTestControls(plain),
      refusals: sqliteRefusals,
      cleanup: () => file.cleanup(),
    };
  },
};

const inbox: InboxHarness<SqliteHandle> = {
  name,
  async setup() {
    const file = freshSqliteFile('inbox');
    const database = file.database();
    const store = new SqliteInboxStore(database);
    await store.migrate();
    // plain SQL from a connection of its own, as another process would run it
    const other = file.connect();
    return {
      store,
      schema: 'main',
      storeWith: (options) => new SqliteInboxStore(database, options),
      async sql(text, params = []) {
        const statement = other.prepare(text);
        if (statement.reader) return statement.all(...params) as Record<string, unknown>[];
        statement.run(...params);
        return [];
      },
      dialect: {
        table: (table) => `"${table}"`,
        param: () => '?',
        uuidType: 'TEXT',
        count: 'count(*)',
        hoursAgo: (hours) => `(${SQLITE_NOW_MS} - ${hours * 3_600_000})`,
        namespaceOption: null,
        async write(tx, sql, params) {
          tx.prepare(sql).run(...params);
        },
      },
      cleanup: () => file.cleanup(),
    };
  },
};

/** One writer, no row locks: the suites leave out their concurrent cases. */
export const sqliteTestDialect: TestDialect = {
  name,
  concurrent: false,
  store,
  gauges: {
    name,
    async setup(options = {}) {
      const file = freshSqliteFile('gauges');
      const database = file.database();
      const store = new SqliteOutboxStore(database, options);
      await store.migrate();
      return { store, transaction: (work) => database.transaction(work), controls: sqliteTestControls(file.database()), cleanup: () => file.cleanup() };
    },
  },
  gaugeExactLimit: GAUGE_EXACT_LIMIT,
  reader: {
    name,
    concurrent: false,
    async setup(options = {}) {
      const file = freshSqliteFile('reader');
      const database = file.database();
      const store = new SqliteOutboxStore(database, options);
      await store.migrate();
      const controls = file.database();
      return {
        reader: store.reader,
        leases: store.leases,
        operator: store,
        enqueue: (messages) => database.transaction(async (tx) => void (await store.insert(tx, messages))),
        controls: sqliteReaderControls(controls),
        leaseControls: sqliteLeaseControls(controls),
        cleanup: async () => {
          await database.close();
          await file.cleanup();
        },
      };
    },
  },
  lease: {
    name,
    concurrent: false,
    async setup() {
      const file = freshSqliteFile('lease');
      const database = file.database();
      const names = sqliteTableNames('outbox');
      const resolved = sqliteMigrations.map((m) => ({ version: m.version, description: m.description, sql: m.sql(names, { partitionCount: 64 }) }));
      await applySqliteMigrations(database, names, names.table, resolved);
      return { leases: new SqliteRelayLeases(database, names), controls: sqliteLeaseControls(file.database()), cleanup: () => file.cleanup() };
    },
  },
  operator: {
    name,
    async setup() {
      const file = freshSqliteFile('operator');
      const database = file.database();
      const store = new SqliteOutboxStore(database);
      await store.migrate();
      return {
        operator: store,
        leases: store.leases,
        reader: store.reader,
        enqueue: (messages) => database.transaction(async (tx) => void (await store.insert(tx, messages))),
        controls: sqliteTestControls(file.database()),
        leaseControls: sqliteLeaseControls(file.database()),
        cleanup: () => file.cleanup(),
      };
    },
  },
  withInbox: (use) => use(inbox),
};
