import { SqliteInboxStore } from '../../src/stores/sqlite/inbox/sqlite-inbox-store.js';
import type { SqliteHandle } from '../../src/stores/sqlite/database.js';
import { SQLITE_NOW_MS } from '../../src/stores/sqlite/migrations.js';
import { freshSqliteFile } from '../support/sqlite-file.js';
import { describeInboxConformance, type InboxHarness } from './inbox-conformance.js';

const harness: InboxHarness<SqliteHandle> = {
  name: 'SQLite (better-sqlite3)',
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
        table: (name) => `"${name}"`,
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

describeInboxConformance(harness);
