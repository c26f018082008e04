import { OutboxerError } from '../../core/errors.js';
import type { MysqlDatabase, MysqlExecutor } from './database.js';
import { mysqlBookkeepingSql, type ResolvedMysqlMigration } from './migrations.js';
import type { MysqlTableNames } from './table-names.js';

/** How long a migration waits for another process's migration of the same database before it gives up. */
const LOCK_WAIT_SECONDS = 60;

/**
 * Applies the migrations `table` has not recorded yet, in order, under `GET_LOCK` of the database, so several
 * processes starting together migrate once. MySQL commits each DDL statement on its own, so every statement is
 * idempotent (`IF NOT EXISTS`, `INSERT IGNORE`) and a version is recorded only after all of its statements ran:
 * a migration cut short is run again whole. Returns the versions applied.
 */
export async function applyMysqlMigrations(
  database: MysqlDatabase,
  names: Pick<MysqlTableNames, 'migrations' | 'migrationLock'>,
  table: string,
  list: readonly ResolvedMysqlMigration[],
): Promise<number[]> {
  return database.session(async (session) => {
    const locked = await session.query('SELECT GET_LOCK(?, ?) AS locked', [names.migrationLock, LOCK_WAIT_SECONDS]);
    if (Number(locked.rows[0]?.locked) !== 1) {
      throw new OutboxerError(
        'OUTBOXER_LOCK_TIMEOUT',
        `migrating ${table}: another migration of this database held the lock ${names.migrationLock} for ${LOCK_WAIT_SECONDS} s; try again once it finished`,
      );
    }
    try {
      await session.query(mysqlBookkeepingSql(names));
      const applied = await appliedVersions(session, names, table);
      const newlyApplied: number[] = [];
      for (const migration of list) {
        if (applied.has(migration.version)) continue;
        for (const statement of migration.statements) await session.query(statement);
        await session.query(`INSERT IGNORE INTO ${names.migrations} (table_name, version) VALUES (?, ?)`, [table, migration.version]);
        newlyApplied.push(migration.version);
      }
      return newlyApplied;
    } finally {
      await session.query('SELECT RELEASE_LOCK(?)', [names.migrationLock]).catch(() => undefined);
    }
  });
}

/** The versions of `list` not recorded for `table` (all of them when there is no bookkeeping yet). Reads only. */
export async function missingMysqlMigrations(
  database: MysqlExecutor,
  names: Pick<MysqlTableNames, 'migrations'>,
  table: string,
  list: readonly Pick<ResolvedMysqlMigration, 'version'>[],
): Promise<number[]> {
  let applied: Set<number>;
  try {
    applied = await appliedVersions(database, names, table);
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === 'ER_NO_SUCH_TABLE') return list.map((m) => m.version);
    throw error;
  }
  return list.filter((m) => !applied.has(m.version)).map((m) => m.version);
}

async function appliedVersions(executor: MysqlExecutor, names: Pick<MysqlTableNames, 'migrations'>, table: string): Promise<Set<number>> {
  const done = await executor.query(`SELECT version FROM ${names.migrations} WHERE table_name = ?`, [table]);
  return new Set(done.rows.map((row) => Number(row.version)));
}

/** A trigger whose body is a compound statement (`BEGIN … END`): its inner `;` would end it early in the `mysql` client. */
const COMPOUND = /\nBEGIN\n[\s\S]*\nEND$/;

/**
 * Every migration as one script for DBAs who apply it themselves (`outboxer sql`) with the `mysql`/`mariadb` client;
 * safe to run again. A compound statement is wrapped in `DELIMITER //` … `DELIMITER ;`, as that client needs.
 */
export function mysqlMigrationScript(
  title: string,
  names: Pick<MysqlTableNames, 'migrations'>,
  table: string,
  list: readonly ResolvedMysqlMigration[],
): string {
  const parts = [`-- ${title} for ${table} (MariaDB 10.6+ / MySQL 8.0.29+)`, `${mysqlBookkeepingSql(names)};`];
  for (const migration of list) {
    parts.push(`-- version ${migration.version}: ${migration.description}`);
    for (const statement of migration.statements) parts.push(COMPOUND.test(statement) ? `DELIMITER //\n${statement} //\nDELIMITER ;` : `${statement};`);
    parts.push(`INSERT IGNORE INTO ${names.migrations} (table_name, version) VALUES ('${table}', ${migration.version});`);
  }
  return `${parts.join('\n')}\n`;
}
