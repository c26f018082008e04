import { MysqlRelayLeases } from '../../src/stores/mysql/leases/mysql-relay-leases.js';
import { applyMysqlMigrations } from '../../src/stores/mysql/migration-runner.js';
import { mysqlMigrations } from '../../src/stores/mysql/migrations.js';
import { DEFAULT_PARTITION_COUNT, mysqlTableNames } from '../../src/stores/mysql/table-names.js';
import { freshMysqlDatabase } from '../support/mysql-database.js';
import type { LeaseHarness } from './lease-harness.js';
import { describeLeaseConformance } from './lease-conformance.js';
import { mysqlLeaseControls } from './mysql-lease-controls.js';

const harness: LeaseHarness = {
  name: 'MariaDB (mysql2)',
  concurrent: true,
  async setup() {
    const fresh = await freshMysqlDatabase('lease');
    const names = mysqlTableNames('outbox');
    const resolved = mysqlMigrations.map((m) => ({
      version: m.version,
      description: m.description,
      statements: m.statements(names, { partitionCount: DEFAULT_PARTITION_COUNT }),
    }));
    await applyMysqlMigrations(fresh.database, names, names.table, resolved);
    return { leases: new MysqlRelayLeases(fresh.database, names), controls: mysqlLeaseControls(fresh.database, names), cleanup: fresh.cleanup };
  },
};

describeLeaseConformance(harness);
