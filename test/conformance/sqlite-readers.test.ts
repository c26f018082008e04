import { SqliteOutboxStore } from '../../src/stores/sqlite/sqlite-store.js';
import { freshSqliteFile } from '../support/sqlite-file.js';
import { describeReaderConformance } from './reader-conformance.js';
import type { ReaderHarness } from './reader-harness.js';
import { sqliteLeaseControls } from './sqlite-lease-controls.js';
import { sqliteReaderControls } from './sqlite-reader-controls.js';

const harness: ReaderHarness = {
  name: 'SQLite (better-sqlite3)',
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
};

describeReaderConformance(harness);
