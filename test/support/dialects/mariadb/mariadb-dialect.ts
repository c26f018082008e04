import mysql from 'mysql2/promise';
import { MysqlInboxStore } from '../../../../src/stores/mysql/inbox/mysql-inbox-store.js';
import type { MysqlQueryable } from '../../../../src/stores/mysql/database.js';
import { MysqlRelayLeases } from '../../../../src/stores/mysql/leases/mysql-relay-leases.js';
import { applyMysqlMigrations } from '../../../../src/stores/mysql/migration-runner.js';
import { mysqlMigrations } from '../../../../src/stores/mysql/migrations.js';
import { MysqlOutboxStore, type MysqlTransaction } from '../../../../src/stores/mysql/mysql-store.js';
import { MYSQL_GAUGE_EXACT_LIMIT } from '../../../../src/stores/mysql/operator/gauges.js';
import { DEFAULT_PARTITION_COUNT, mysqlTableNames, quoteMysql } from '../../../../src/stores/mysql/table-names.js';
import type { InboxHarness } from '../../../conformance/inbox-conformance.js';
import type { ReaderHarness } from '../../../conformance/reader-harness.js';
import type { SqlStoreHarness, TableRefusals } from '../../../conformance/store-harness.js';
import { freshMysqlDatabase } from '../../mysql-database.js';
import type { TestDialect } from '../test-dialect.js';
import { mysqlLeaseControls } from './mysql-lease-controls.js';
import { mysqlReaderControls } from './mysql-reader-controls.js';
import { mysqlTestControls } from './mysql-test-controls.js';

const name = 'MariaDB (mysql2)';

/**
 * The shared suites speak PostgreSQL in their plain SQL: `$n` placeholders, casts, `'\x..'::bytea` literals.
 * This turns those into MariaDB's; anything else is run as written.
 */
function mysqlSpelling(text: string): string {
  return text
    .replace(/'\\x([0-9a-f]*)'::bytea/gi, "X'$1'")
    .replace(/::(jsonb|json|text|bytea)\b/g, '')
    .replace(/\$\d+/g, '?');
}

/** MariaDB names the failed CHECK (the header trigger turns a non-string value into text that check refuses). */
const mysqlRefusals: TableRefusals = {
  headerNotString: () => /CONSTRAINT `outbox_headers_object_of_strings` failed/,
  headersNotObject: /CONSTRAINT `outbox_headers_object_of_strings` failed/,
  oneBody: /CONSTRAINT `outbox_one_body` failed/,
  contentType: /CONSTRAINT `outbox_content_type_valid` failed/,
  payloadNotJson: /CONSTRAINT `outbox_payload_json` failed/,
};

/** Transactions through a mysql2 connection of the test's pool, as an application holds them. */
const store: SqlStoreHarness<MysqlTransaction> = {
  name,
  async setup(options = {}) {
    const fresh = await freshMysqlDatabase('conf');
    const store = new MysqlOutboxStore(fresh.database, options);
    await store.migrate();
    const sql = (text: string, params?: unknown[]) => fresh.sql(mysqlSpelling(text), params);
    return {
      store,
      table: '`outbox`',
      refusals: mysqlRefusals,
      sql,
      controls: mysqlTestControls(sql),
      async transaction(work) {
        const connection = await fresh.pool.getConnection();
        try {
          await connection.beginTransaction();
          try {
            const result = await work(connection as unknown as MysqlQueryable);
            await connection.commit();
            return result;
          } catch (error) {
            await connection.rollback();
            throw error;
          }
        } finally {
          connection.release();
        }
      },
      cleanup: fresh.cleanup,
    };
  },
};

/** The reader harness on a database whose sessions run in `timeZone` (none: the server's). */
export function mariadbReaderHarness(timeZone?: string): ReaderHarness {
  return {
    name: `${name}${timeZone === undefined ? '' : `, session time zone ${timeZone}`}`,
    concurrent: true,
    async setup(options = {}) {
      const fresh = await freshMysqlDatabase('reader', timeZone === undefined ? {} : { timeZone });
      const store = new MysqlOutboxStore(fresh.database, options);
      await store.migrate();
      return {
        reader: store.reader,
        leases: store.leases,
        operator: store,
        enqueue: (messages) => fresh.database.transaction(async (tx) => void (await store.insert(tx, messages))),
        controls: mysqlReaderControls(fresh.database, store.tableNames, store),
        leaseControls: mysqlLeaseControls(fresh.database, store.tableNames),
        cleanup: fresh.cleanup,
      };
    },
  };
}

const inbox: InboxHarness<MysqlQueryable> = {
  name,
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
        table: (table) => `${quoteMysql(fresh.name)}.${quoteMysql(table)}`,
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

export const mariadbTestDialect: TestDialect = {
  name,
  concurrent: true,
  store,
  gauges: {
    name,
    async setup(options = {}) {
      const fresh = await freshMysqlDatabase('gauges');
      const store = new MysqlOutboxStore(fresh.database, options);
      await store.migrate();
      return { store, transaction: (work) => fresh.database.transaction(work), controls: mysqlTestControls(fresh.sql), cleanup: fresh.cleanup };
    },
  },
  gaugeExactLimit: MYSQL_GAUGE_EXACT_LIMIT,
  reader: mariadbReaderHarness(),
  lease: {
    name,
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
  },
  operator: {
    name,
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
  },
  withInbox: (use) => use(inbox),
};
