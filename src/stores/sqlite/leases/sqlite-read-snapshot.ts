import type { SqliteDatabase } from '../database.js';

/**
 * Runs synchronous reads (inside `database.read`) in one read transaction, so every statement sees the same
 * committed state even while other processes write to the file (WAL: a reader never waits for the writer).
 */
export function inReadSnapshot<T>(database: SqliteDatabase, work: () => T): T {
  database.handle.exec('BEGIN');
  try {
    return work();
  } finally {
    database.handle.exec('COMMIT');
  }
}
