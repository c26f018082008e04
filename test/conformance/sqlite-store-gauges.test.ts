import { GAUGE_EXACT_LIMIT } from '../../src/stores/postgres/gauges-sql.js';
import type { SqliteHandle } from '../../src/stores/sqlite/database.js';
import { SqliteOutboxStore } from '../../src/stores/sqlite/sqlite-store.js';
import { freshSqliteFile } from '../support/sqlite-file.js';
import { sqliteTestControls } from './sqlite-test-controls.js';
import type { StoreHarness } from './store-harness.js';
import { describeStoreGaugesConformance } from './store-gauges-conformance.js';

const harness: StoreHarness<SqliteHandle> = {
  name: 'SQLite (better-sqlite3)',
  async setup(options = {}) {
    const file = freshSqliteFile('gauges');
    const database = file.database();
    const store = new SqliteOutboxStore(database, options);
    await store.migrate();
    return { store, transaction: (work) => database.transaction(work), controls: sqliteTestControls(file.database()), cleanup: () => file.cleanup() };
  },
};

describeStoreGaugesConformance(harness, { exactLimit: GAUGE_EXACT_LIMIT });
