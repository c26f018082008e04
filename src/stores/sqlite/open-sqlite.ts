import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ConfigurationError, OutboxerError } from '../../core/errors.js';
import { loadDriver } from '../shared/load-driver.js';
import { prepareConnection, SqliteDatabase, type SqliteHandle } from './database.js';
import { SqliteOutboxStore, type SqliteStoreOptions } from './sqlite-store.js';

export interface OpenSqliteOptions extends SqliteStoreOptions {
  /** How long a write waits, in all, while another connection (another process) writes the file. Default 5000 ms. */
  readonly busyWaitMs?: number;
}

type BetterSqlite3Constructor = new (path: string) => SqliteHandle;

/**
 * Wraps a better-sqlite3 connection for the store (the store's own connection: give producers another one).
 * Applies the store's connection settings (WAL, a short busy timeout). `ownsHandle` makes `close()` close it.
 */
export function fromBetterSqlite3(handle: SqliteHandle, options: { readonly ownsHandle?: boolean; readonly busyWaitMs?: number } = {}): SqliteDatabase {
  prepareConnection(handle);
  return new SqliteDatabase(handle, options);
}

/**
 * Opens (creating it if missing) the SQLite file at `path` on a connection of the store's own, which the store
 * closes with `close()`. better-sqlite3 is an optional peer dependency, loaded here.
 */
export async function openSqliteStore(path: string, options: OpenSqliteOptions = {}): Promise<SqliteOutboxStore> {
  const { busyWaitMs, ...storeOptions } = options;
  if (typeof path !== 'string' || path === '') {
    throw new ConfigurationError('OUTBOXER_INVALID_OPTION', 'openSqliteStore needs the path of a SQLite file (or ":memory:" for one connection only)', {
      options: ['path'],
    });
  }
  const Database = await loadBetterSqlite3();
  let handle: SqliteHandle;
  try {
    handle = new Database(path);
  } catch (error) {
    throw openError(path, error);
  }
  try {
    return new SqliteOutboxStore(fromBetterSqlite3(handle, { ownsHandle: true, ...(busyWaitMs === undefined ? {} : { busyWaitMs }) }), storeOptions);
  } catch (error) {
    handle.close();
    throw error;
  }
}

async function loadBetterSqlite3(): Promise<BetterSqlite3Constructor> {
  const loaded = await loadDriver('SQLite', 'better-sqlite3', () => import('better-sqlite3') as Promise<unknown>);
  return (loaded as { default: BetterSqlite3Constructor }).default;
}

function openError(path: string, error: unknown): OutboxerError {
  const directory = dirname(resolve(path));
  if (!existsSync(directory) || !statSync(directory).isDirectory()) {
    return new OutboxerError('OUTBOXER_DATABASE_NOT_FOUND', `cannot open SQLite file ${path}: the directory ${directory} does not exist; create it first`, {
      cause: error,
    });
  }
  const detail = error instanceof Error ? error.message : String(error);
  return new OutboxerError(
    'OUTBOXER_DATABASE_UNAVAILABLE',
    `cannot open SQLite file ${path} (${detail}): check that it is a SQLite database this process may read and write`,
    { cause: error },
  );
}
