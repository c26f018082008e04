import type { Logger } from '../../core/ports.js';
import type { CliConfig } from './config.js';
import type { CliStore, OpenStore } from './database.js';

/** The connections of the daemon's HTTP server and how long one of its statements may run. */
export interface OpsPool {
  readonly connections: number;
  readonly statementTimeoutMs: number;
}

/**
 * 2 connections, as many as the server runs store calls at once (`storeConcurrency`), apart from the relay's 4; a
 * statement ends after 10 s (the lag of a million pending rows reads in about half a second).
 */
export const OPS_POOL: OpsPool = Object.freeze({ connections: 2, statementTimeoutMs: 10_000 });

/** The store the HTTP server reads and changes, and how to let it go. */
export interface OpsStore {
  readonly store: CliStore;
  /** Ends its own pool; a store shared with the relay is left to the relay. */
  close(): Promise<void>;
}

/**
 * The store of the daemon's HTTP server: on PostgreSQL and MariaDB/MySQL a store over a pool of its own (`OPS_POOL`),
 * so that what its clients ask can never take the relay's connections, and a runaway read ends on the server's
 * timeout. SQLite shares the relay's store: better-sqlite3 runs every statement on the process's one thread, so a
 * second connection would add nothing; there the server's bound on its calls and its shared reads bound the cost.
 * Nothing connects before the first request.
 */
export async function openOpsStore(config: CliConfig, opened: OpenStore, logger: Logger): Promise<OpsStore> {
  const url = config.databaseUrl;
  if (opened.dialect === 'sqlite' || url === undefined) return { store: opened.store, close: () => Promise.resolve() };
  const options = config.relay?.store ?? {};
  const store =
    opened.dialect === 'mysql'
      ? await (await import('./mysql-store-opener.js')).openMysqlOpsStore(config, url, logger, options, OPS_POOL)
      : await (await import('./postgres-store-opener.js')).openPostgresOpsStore(config, url, logger, options, OPS_POOL);
  return { store, close: () => store.close() };
}
