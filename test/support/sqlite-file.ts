import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { prepareConnection, SqliteDatabase } from '../../src/stores/sqlite/database.js';

/** A SQLite file of its own for one test, in a fresh temporary directory (WAL files included). */
export interface FreshSqliteFile {
  readonly path: string;
  /** Opens another connection to the file (as another process or a writer would), in WAL mode. */
  connect(): Database.Database;
  /** A store-side handle on a connection of its own. */
  database(): SqliteDatabase;
  /** Closes every connection opened here and removes the directory. */
  cleanup(): Promise<void>;
}

export function freshSqliteFile(prefix: string): FreshSqliteFile {
  const directory = mkdtempSync(join(tmpdir(), `outboxer-${prefix}-`));
  const path = join(directory, 'outbox.db');
  const opened: Database.Database[] = [];
  const connect = () => {
    const handle = new Database(path);
    prepareConnection(handle);
    opened.push(handle);
    return handle;
  };
  return {
    path,
    connect,
    database: () => new SqliteDatabase(connect()),
    async cleanup() {
      for (const handle of opened) if (handle.open) handle.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
