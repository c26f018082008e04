import { describe, expect, it } from 'vitest';
import { MysqlOutboxStore } from '../../src/stores/mysql/mysql-store.js';
import { MYSQL_GAUGE_EXACT_LIMIT } from '../../src/stores/mysql/operator/gauges.js';
import { GAUGE_EXACT_LIMIT } from '../../src/stores/postgres/gauges-sql.js';
import { freshMysqlDatabase } from '../support/mysql-database.js';
import { mysqlTestControls } from './mysql-test-controls.js';
import type { StoreHarness } from './store-harness.js';
import { describeStoreGaugesConformance } from './store-gauges-conformance.js';

const harness: StoreHarness = {
  name: 'MariaDB (mysql2)',
  async setup(options = {}) {
    const fresh = await freshMysqlDatabase('gauges');
    const store = new MysqlOutboxStore(fresh.database, options);
    await store.migrate();
    return { store, transaction: (work) => fresh.database.transaction(work), controls: mysqlTestControls(fresh.sql), cleanup: fresh.cleanup };
  },
};

describe('MariaDB gauges limit', () => {
  it('counts exactly up to the same limit as PostgreSQL', () => {
    expect(MYSQL_GAUGE_EXACT_LIMIT).toBe(GAUGE_EXACT_LIMIT);
  });
});

describeStoreGaugesConformance(harness, { exactLimit: MYSQL_GAUGE_EXACT_LIMIT });
