import { SqliteOutboxStore } from '../../src/stores/sqlite/sqlite-store.js';
import { freshSqliteFile } from '../support/sqlite-file.js';
import { describeOperatorConformance, type OperatorHarness } from './operator-conformance.js';
import { describePendingConformance } from './pending-conformance.js';
import { sqliteLeaseControls } from './sqlite-lease-controls.js';
import { sqliteTestControls } from './sqlite-test-controls.js';

const harness: OperatorHarness = {
  name: 'SQLite (better-sqlite3)',
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
};

describeOperatorConformance(harness);
describePendingConformance(harness);
