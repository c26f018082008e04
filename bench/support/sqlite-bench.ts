import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { services } from '../config.js';
import { MESSAGE_TYPE, padOf, type Workload } from './workload.js';

/** A SQLite file of one contender's own, in a directory of its own (the WAL files go there too). */
export interface BenchSqliteFile {
  readonly path: string;
  /** A new connection to the file, with the store's connection settings applied by whoever opened it. */
  open(): Database.Database;
  remove(): void;
}

export function benchSqliteFile(prefix: string): BenchSqliteFile {
  const directory = mkdtempSync(join(services.sqliteDirectory, `${prefix}-`));
  const path = join(directory, 'outbox.db');
  return {
    path,
    open: () => new Database(path),
    remove: () => rmSync(directory, { recursive: true, force: true }),
  };
}

/**
 * Adds messages first..first+count-1 as committed rows, one `INSERT … SELECT` over a recursive series per chunk, in
 * message order: plain SQL, with `id` and the times from the table's defaults, the body text byte for byte what the
 * PostgreSQL load's jsonb prints.
 */
export function sqliteBulkLoad(handle: Database.Database, table: string, workload: Workload, first: number, count: number, chunk = 200_000): void {
  for (let from = first; from < first + count; from += chunk) {
    handle.exec('BEGIN IMMEDIATE');
    try {
      sqliteInsertRows(handle, table, workload, from, Math.min(first + count, from + chunk) - 1);
      handle.exec('COMMIT');
    } catch (error) {
      if (handle.inTransaction) handle.exec('ROLLBACK');
      throw error;
    }
  }
  handle.exec(`ANALYZE "${table}"`);
}

/** One chunk of `sqliteBulkLoad`, messages from..to, in the caller's transaction. */
export function sqliteInsertRows(handle: Database.Database, table: string, workload: Workload, from: number, to: number): void {
  handle
    .prepare(
      `WITH RECURSIVE g(n) AS (SELECT ? UNION ALL SELECT n + 1 FROM g WHERE n < ?)
    INSERT INTO "${table}" (topic, type, "key", payload)
    SELECT ?, ?, 'k-' || (n % ?), '{"n": ' || n || ', "pad": "' || ? || '"}' FROM g ORDER BY n`,
    )
    .run(from, to, workload.topic, MESSAGE_TYPE, workload.keys, 'x'.repeat(padOf(workload)));
}

export function sqlitePending(handle: Database.Database, table: string): number {
  const row = handle.prepare(`SELECT COUNT(*) AS n FROM "${table}" WHERE state = 'pending'`).get() as { n: number } | undefined;
  return row?.n ?? Number.NaN;
}

/** SQLite's and better-sqlite3's versions and the settings that decide a commit's cost, for the report's conditions. */
export function sqliteConditions(): string {
  const file = benchSqliteFile('outboxer-bench-conditions');
  const handle = file.open();
  try {
    const version = (handle.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
    const journal = String(handle.pragma('journal_mode = WAL', { simple: true }));
    const synchronous = ['OFF', 'NORMAL', 'FULL', 'EXTRA'][Number(handle.pragma('synchronous', { simple: true }))] ?? 'unknown';
    return `${version} through better-sqlite3 (journal_mode=${journal}, synchronous=${synchronous}, file under ${services.sqliteDirectory})`;
  } finally {
    handle.close();
    file.remove();
  }
}
