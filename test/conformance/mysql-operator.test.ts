import { MysqlOutboxStore } from '../../src/stores/mysql/mysql-store.js';
import { freshMysqlDatabase } from '../support/mysql-database.js';
import { mysqlLeaseControls } from './mysql-lease-controls.js';
import { mysqlTestControls } from './mysql-test-controls.js';
import { describeOperatorConformance, type OperatorHarness } from './operator-conformance.js';
import { describePendingConformance } from './pending-conformance.js';

const harness: OperatorHarness = {
  name: 'MariaDB (mysql2)',
  async setup() {
    const fresh = await freshMysqlDatabase('operator');
    const store = new MysqlOutboxStore(fresh.database);
    await store.migrate();
    return {
      operator: store,
      leases: store.leases,
      reader: store.reader,
      enqueue: (messages) => fresh.database.transaction(async (tx) => void (await store.insert(tx, messages))),
      controls: mysqlTestControls(fresh.sql),
      leaseControls: mysqlLeaseControls(fresh.database, store.tableNames),
      cleanup: fresh.cleanup,
    };
  },
};

describeOperatorConformance(harness);
describePendingConformance(harness);
