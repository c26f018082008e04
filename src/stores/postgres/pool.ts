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
 * `pg` pool settings that survive a dead network: TCP keepalive on (node-postgres leaves it off),
 * a client-side query timeout and a server-side statement timeout.
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
