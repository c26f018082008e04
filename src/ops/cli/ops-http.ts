import { describeError } from '../../core/errors.js';
import type { Logger } from '../../core/ports.js';
import type { Relay } from '../../core/relay.js';
import type { CliConfig } from './config.js';
import type { OpenedStore } from '../../core/ports/store-dialect.js';
import type { OutboxerMetrics } from '../metrics/index.js';
import { TargetedFailure } from './errors.js';
import { OPS_POOL, openOpsStore } from './ops-store.js';
import type { HttpSettings } from './relay-settings.js';

/** What `/metrics` answers (501) and the warning says when `prom-client` is missing. */
export const PROM_CLIENT_MISSING =
  'prom-client is not installed, so this relay has no metrics: install it next to outboxer (npm install prom-client) and restart the relay';

/**
 * The daemon's metrics (`outboxer/metrics`, loaded only when the HTTP server is on). `prom-client` is an optional
 * peer: without it the server still runs, `/metrics` answers 501 saying what to install, and a warning says it too.
 */
export async function loadDaemonMetrics(logger: Logger): Promise<OutboxerMetrics | undefined> {
  try {
    const { OutboxerMetrics } = await import('../metrics/index.js');
    return new OutboxerMetrics();
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    logger.warn({ error: describeError(error) }, `${PROM_CLIENT_MISSING}; /metrics answers 501 meanwhile`);
    return undefined;
  }
}

export interface DaemonOpsServer {
  readonly url: string;
  /** Stops listening, stops observing the relay and the store, and ends the server's own database pool. */
  close(): Promise<void>;
}

/**
 * Starts the HTTP server of operations for the daemon's store and relay, with the metrics observing both. The server
 * reads and changes the table through a store on a pool of its own (`openOpsStore`: 2 connections, a 10 s statement
 * timeout), never the relay's: its clients cannot take the connections that publishing needs. A failure to listen
 * (port taken, address not of this machine) is a failure of the HTTP server, not of the database: it is reported as such.
 */
export async function startDaemonOpsServer(
  settings: HttpSettings,
  parts: {
    readonly config: CliConfig;
    readonly opened: OpenedStore;
    readonly relay: Relay;
    readonly metrics: OutboxerMetrics | undefined;
    readonly logger: Logger;
  },
): Promise<DaemonOpsServer> {
  const [{ createOpsServer }, { unavailableMetrics }] = await Promise.all([import('../http/index.js'), import('../http/unavailable-metrics.js')]);
  const { config, opened, relay, metrics, logger } = parts;
  const ops = await openOpsStore(config, opened, logger);
  const stopObserving = metrics === undefined ? [] : [metrics.observeRelay(relay), metrics.observeStore(ops.store)];
  const server = createOpsServer({
    operator: ops.store,
    relay,
    metrics: metrics ?? unavailableMetrics(PROM_CLIENT_MISSING),
    host: settings.host,
    port: settings.port,
    ...(settings.adminToken === undefined ? {} : { adminToken: settings.adminToken }),
    storeConcurrency: OPS_POOL.connections,
    logger,
  });
  const release = async () => {
    for (const stop of stopObserving.splice(0)) stop();
    try {
      await ops.close();
    } catch (error) {
      logger.warn({ error: describeError(error) }, "closing the http server's database pool failed");
    }
  };
  try {
    const { url } = await server.listen();
    return {
      url,
      async close() {
        await server.close();
        await release();
      },
    };
  } catch (error) {
    await release();
    throw new TargetedFailure(error, { what: 'http server', urls: [] });
  }
}
