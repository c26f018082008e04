import { applySqliteMigrations } from '../../src/stores/sqlite/migration-runner.js';
import { sqliteMigrations } from '../../src/stores/sqlite/migrations.js';
import { sqliteTableNames } from '../../src/stores/sqlite/table-names.js';
import { SqliteRelayLeases } from '../../src/stores/sqlite/leases/sqlite-relay-leases.js';
import { freshSqliteFile } from '../support/sqlite-file.js';
import { describeLeaseConformance } from './lease-conformance.js';
import { sqliteLeaseControls } from './sqlite-lease-controls.js';

describeLeaseConformance({
  name: 'SQLite (better-sqlite3)',
  concurrent: false,
  async setup() {
    const file = freshSqliteFile('lease');
    const database = file.database();
    const names = sqliteTableNames('outbox');
    const resolved = sqliteMigrations.map((m) => ({ version: m.version, description: m.description, sql: m.sql(names, { partitionCount: 64 }) }));
    await applySqliteMigrations(database, names, names.table, resolved);
    return { leases: new SqliteRelayLeases(database, names), controls: sqliteLeaseControls(file.database()), cleanup: () => file.cleanup() };
  },
});
