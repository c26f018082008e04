import type { MysqlDatabase } from '../database.js';
import { applyMysqlMigrations, mysqlMigrationScript } from '../migration-runner.js';
import type { ResolvedMysqlMigration } from '../migrations.js';
import { MYSQL_NOW } from '../migrations.js';
import { quoteMysql, type MysqlTableNames } from '../table-names.js';

/** One versioned change of the inbox table on MariaDB/MySQL (each statement on its own: DDL commits at once). */
export interface MysqlInboxMigration {
  readonly version: number;
  readonly description: string;
  readonly statements: (names: MysqlInboxTableNames) => readonly string[];
}

/** The inbox table's names: `inbox` quoted (and qualified), `table` its own name, plus the shared bookkeeping. */
export interface MysqlInboxTableNames extends Pick<MysqlTableNames, 'migrations' | 'migrationLock' | 'table'> {
  readonly inbox: string;
}

const TEXT = 'CHARACTER SET utf8mb4 COLLATE utf8mb4_bin';
const ASCII = 'CHARACTER SET ascii COLLATE ascii_bin';

/**
 * Versioned, append-only: a released migration is never edited. Bookkeeping rows live in the database's
 * `outboxer_migrations` table (shared with the outbox), keyed by this table's name. Times are UTC, microseconds.
 */
export const mysqlInboxMigrations: readonly MysqlInboxMigration[] = Object.freeze([
  {
    version: 1,
    description: 'inbox table keyed by (consumer, message_id), retention and dead indexes',
    statements: (n) => {
      const index = (suffix: string) => quoteMysql(`${n.table}_${suffix}`);
      return [
        `CREATE TABLE IF NOT EXISTS ${n.inbox} (
  consumer      VARCHAR(200) ${TEXT} NOT NULL,
  message_id    CHAR(36) ${ASCII} NOT NULL,
  type          TEXT ${TEXT} NOT NULL,
  topic         TEXT ${TEXT} NOT NULL,
  \`key\`         TEXT ${TEXT} NULL,
  state         VARCHAR(9) ${ASCII} NOT NULL,
  attempts      INT NOT NULL DEFAULT 0,
  last_error    TEXT ${TEXT} NULL,
  first_seen_at DATETIME(6) NOT NULL DEFAULT (${MYSQL_NOW}),
  updated_at    DATETIME(6) NOT NULL DEFAULT (${MYSQL_NOW}),
  processed_at  DATETIME(6) NULL,
  dead_at       DATETIME(6) NULL,
  PRIMARY KEY (consumer, message_id),
  KEY ${index('processed_idx')} (state, processed_at),
  KEY ${index('dead_idx')} (consumer, state, dead_at),
  CONSTRAINT ${index('consumer_valid')} CHECK (consumer <> '' AND LENGTH(consumer) <= 200),
  CONSTRAINT ${index('state_valid')} CHECK (state IN ('processed', 'failed', 'dead'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
      ];
    },
  },
]);

function resolved(names: MysqlInboxTableNames): ResolvedMysqlMigration[] {
  return mysqlInboxMigrations.map((m) => ({ version: m.version, description: m.description, statements: m.statements(names) }));
}

/** The whole inbox DDL as one idempotent script, for DBAs who apply it themselves. */
export function mysqlInboxMigrationScript(names: MysqlInboxTableNames): string {
  return mysqlMigrationScript('outboxer inbox schema', names, names.table, resolved(names));
}

/** Applies what is missing under the database's migration lock; returns the versions applied. */
export function runMysqlInboxMigrations(database: MysqlDatabase, names: MysqlInboxTableNames): Promise<number[]> {
  return applyMysqlMigrations(database, names, names.table, resolved(names));
}
