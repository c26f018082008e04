import type { SqliteHandle } from '../../src/stores/sqlite/database.js';
import { SqliteOutboxStore } from '../../src/stores/sqlite/sqlite-store.js';
import { freshSqliteFile } from '../support/sqlite-file.js';
import { sqliteTestControls } from './sqlite-test-controls.js';
import type { SqlStoreHarness, TableRefusals } from './store-harness.js';
import { describeStoreBodyConformance } from './store-body-conformance.js';
import { describeStoreConformance } from './store-conformance.js';

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

const harness: SqlStoreHarness<SqliteHandle> = {
  name: 'SQLite (better-sqlite3)',
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

describeStoreConformance(harness);
describeStoreBodyConformance(harness);
