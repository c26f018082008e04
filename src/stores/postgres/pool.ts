import type { PoolConfig } from 'pg';

export interface SafePoolOptions {
  readonly connectionString: string;
  readonly max?: number;
  /** Client-side bound on every query, so a black-holed network cannot hang the relay. Default 30 s. */
  readonly queryTimeoutMs?: number;
  readonly connectTimeoutMs?: number;
  readonly applicationName?: string;
}

/**
 * `pg` settings for a pool that outboxer's relay owns (the daemon's), made to survive a dead network.
 * Exactly: `max` 4, TCP keepalive after 10 s (node-postgres leaves it off), a 10 s connect timeout, the
 * client `query_timeout` **and the server `statement_timeout`** both `queryTimeoutMs` (30 s),
 * `idle_in_transaction_session_timeout` twice that (at least 60 s), `application_name` `outboxer`.
 * On your application's own pool these would cap it at 4 connections and cancel its longer statements:
 * give the relay a pool of its own instead (`fromPgPool(new pg.Pool(safePoolConfig(…)), { ownsPool: true })`).
 */
export function safePoolConfig(options: SafePoolOptions): PoolConfig {
  const queryTimeoutMs = options.queryTimeoutMs ?? 30_000;
  return {
    connectionString: options.connectionString,
    max: options.max ?? 4,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    query_timeout: queryTimeoutMs,
    statement_timeout: queryTimeoutMs,
    idle_in_transaction_session_timeout: Math.max(queryTimeoutMs * 2, 60_000),
    application_name: options.applicationName ?? 'outboxer',
  };
}
