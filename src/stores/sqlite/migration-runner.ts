import type { SqliteDatabase } from './database.js';
import { addColumnScript, columnPresentSql, migrationSegments } from './migration-add-column.js';
import { type ResolvedSqliteMigration, sqliteBookkeepingSql } from './migrations.js';
import type { SqliteTableNames } from './table-names.js';

/**
 * Applies the migrations `table` has not recorded yet in one `BEGIN IMMEDIATE` transaction: SQLite's own write lock
 * makes concurrent migrations (several processes on one file) run one after the other, and the second finds
 * everything recorded. DDL is transactional in SQLite, so a migration cut short leaves nothing behind. A column a
 * migration adds (`addColumnSql`) is added only where it is missing: the script adds it in a transaction of its
 * own, so a script cut short may leave it without the version recorded.
 */
export function applySqliteMigrations(
  database: SqliteDatabase,
  names: Pick<SqliteTableNames, 'migrations'>,
  table: string,
  list: readonly ResolvedSqliteMigration[],
): Promise<number[]> {
  return database.write(() => {
    database.handle.exec(sqliteBookkeepingSql(names));
    const applied = appliedVersions(database, names, table);
    const newlyApplied: number[] = [];
    for (const migration of list) {
      if (applied.has(migration.version)) continue;
      for (const segment of migrationSegments(migration.sql)) {
        if (segment.kind === 'sql') database.handle.exec(segment.sql);
        else if (database.get(`SELECT ${columnPresentSql(segment.table, segment.column)} AS found`)?.found !== 1) database.handle.exec(segment.statement);
      }
      database.run(`INSERT OR IGNORE INTO ${names.migrations} (table_name, version) VALUES (?, ?)`, [table, migration.version]);
      newlyApplied.push(migration.version);
    }
    return newlyApplied;
  });
}

/** The versions of `list` not recorded for `table` (all of them when there is no bookkeeping yet). Reads only. */
export function missingSqliteMigrations(
  database: SqliteDatabase,
  names: Pick<SqliteTableNames, 'migrations'>,
  table: string,
  list: readonly Pick<ResolvedSqliteMigration, 'version'>[],
): Promise<number[]> {
  return database.read(() => {
    const bookkeeping = database.get(`SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'outboxer_migrations'`);
    if (bookkeeping === undefined) return list.map((m) => m.version);
    const applied = appliedVersions(database, names, table);
    return list.filter((m) => !applied.has(m.version)).map((m) => m.version);
  });
}

function appliedVersions(database: SqliteDatabase, names: Pick<SqliteTableNames, 'migrations'>, table: string): Set<number> {
  return new Set(database.all(`SELECT version FROM ${names.migrations} WHERE table_name = ?`, [table]).map((row) => Number(row.version)));
}

/**
 * Every migration as one script for `sqlite3` (`outboxer sql`); safe to run again. It runs in one `BEGIN IMMEDIATE`
 * transaction, but for each column a migration adds (SQLite has no `ADD COLUMN IF NOT EXISTS`): that one is added
 * between two transactions, only where it is missing (`addColumnScript`), and the version is recorded only when the
 * column is there.
 */
export function sqliteMigrationScript(
  title: string,
  names: Pick<SqliteTableNames, 'migrations'>,
  table: string,
  list: readonly ResolvedSqliteMigration[],
): string {
  const parts = [`-- ${title} for ${table} (SQLite 3.31+)`, 'BEGIN IMMEDIATE;', sqliteBookkeepingSql(names)];
  for (const migration of list) {
    parts.push(`-- version ${migration.version}: ${migration.description}`);
    const added: string[] = [];
    for (const segment of migrationSegments(migration.sql)) {
      if (segment.kind === 'sql') {
        parts.push(segment.sql.trim());
        continue;
      }
      parts.push(
        'COMMIT;',
        `-- ${segment.column}: ADD COLUMN where it is missing, through an ATTACH of this file (outside a transaction, as ATTACH must be)`,
        ...addColumnScript(segment),
        'BEGIN IMMEDIATE;',
      );
      added.push(columnPresentSql(segment.table, segment.column));
    }
    parts.push(
      added.length === 0
        ? `INSERT OR IGNORE INTO ${names.migrations} (table_name, version) VALUES ('${table}', ${migration.version});`
        : `INSERT OR IGNORE INTO ${names.migrations} (table_name, version) SELECT '${table}', ${migration.version} WHERE ${added.join(' AND ')};`,
    );
  }
  parts.push('COMMIT;');
  return `${parts.join('\n')}\n`;
}
