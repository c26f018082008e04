import type { MysqlQueryable } from '../../src/stores/mysql/database.js';
import { MysqlOutboxStore, type MysqlTransaction } from '../../src/stores/mysql/mysql-store.js';
import { freshMysqlDatabase } from '../support/mysql-database.js';
import { mysqlTestControls } from './mysql-test-controls.js';
import { describeStoreBodyConformance } from './store-body-conformance.js';
import { describeStoreConformance } from './store-conformance.js';
import type { SqlStoreHarness, TableRefusals } from './store-harness.js';

/**
 * The shared suites speak PostgreSQL in their plain SQL: `$n` placeholders, casts, `'\x..'::bytea` literals.
 * This turns those into MariaDB's; anything else is run as written.
 */
function mysqlDialect(text: string): string {
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
const harness: SqlStoreHarness<MysqlTransaction> = {
  name: 'MariaDB (mysql2)',
  async setup(options = {}) {
    const fresh = await freshMysqlDatabase('conf');
    const store = new MysqlOutboxStore(fresh.database, options);
    await store.migrate();
    const sql = (text: string, params?: unknown[]) => fresh.sql(mysqlDialect(text), params);
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

describeStoreConformance(harness);
describeStoreBodyConformance(harness);
