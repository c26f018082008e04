import mysql from 'mysql2/promise';
import { MysqlInboxStore } from '../../src/stores/mysql/inbox/mysql-inbox-store.js';
import type { MysqlQueryable } from '../../src/stores/mysql/database.js';
import { quoteMysql } from '../../src/stores/mysql/table-names.js';
import { freshMysqlDatabase } from '../support/mysql-database.js';
import { describeInboxConformance, type InboxHarness } from './inbox-conformance.js';

const harness: InboxHarness<MysqlQueryable> = {
  name: 'MariaDB (mysql2)',
  async setup() {
    const fresh = await freshMysqlDatabase('inbox');
    const store = new MysqlInboxStore(fresh.database, { database: fresh.name });
    await store.migrate();
    // the suite compares counts with numbers: a pool with mysql2's defaults reads BIGINT as a number
    const plain = mysql.createPool({ uri: fresh.url, connectionLimit: 2 });
    return {
      store,
      schema: fresh.name,
      storeWith: (options) => new MysqlInboxStore(fresh.database, { database: fresh.name, ...options }),
      sql: async (text, params) => (await plain.query(text, params))[0] as Record<string, unknown>[],
      dialect: {
        table: (name) => `${quoteMysql(fresh.name)}.${quoteMysql(name)}`,
        param: () => '?',
        uuidType: 'CHAR(36)',
        count: 'count(*)',
        hoursAgo: (hours) => `TIMESTAMPADD(HOUR, -${hours}, UTC_TIMESTAMP(6))`,
        namespaceOption: 'database',
        async write(tx, sql, params) {
          await tx.query(sql, [...params]);
        },
      },
      async cleanup() {
        await plain.end();
        await fresh.cleanup();
      },
    };
  },
};

describeInboxConformance(harness);
