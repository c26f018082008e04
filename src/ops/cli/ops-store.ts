import type { Logger } from '../../core/ports.js';
import type { DialectStore, OpenedStore } from '../../core/ports/store-dialect.js';
import type { CliConfig } from './config.js';
import { targetOf } from './database.js';

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
  readonly store: DialectStore;
  /** Ends its own pool; a store shared with the relay is left to the relay. */
  close(): Promise<void>;
}

/**
 * The store of the daemon's HTTP server: where the dialect has `separateOperationsStore`, a store over a pool of its
 * own (`OPS_POOL`, `outboxer relay http` in the server's session list), so that what its clients ask can never take
 * the relay's connections, and a runaway read ends on the server's timeout. Elsewhere (SQLite) it shares the relay's
 * store; there the server's bound on its calls and its shared reads bound the cost. Nothing connects before the
 * first request.
 */
export async function openOpsStore(config: CliConfig, opened: OpenedStore, logger: Logger): Promise<OpsStore> {
  if (!opened.dialect.capabilities.separateOperationsStore) return { store: opened.store, close: () => Promise.resolve() };
  const own = await opened.dialect.open(targetOf(config), {
    logger,
    applicationName: `outboxer ${config.command} http`,
    connections: OPS_POOL.connections,
    statementTimeoutMs: OPS_POOL.statementTimeoutMs,
    tuning: config.relay?.store,
  });
  return { store: own.store, close: () => own.store.close() };
}
