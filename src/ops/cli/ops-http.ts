import { describeError } from '../../core/errors.js';
import type { Logger } from '../../core/ports.js';
import type { Relay } from '../../core/relay.js';
import type { CliStore } from './database.js';
import type { OutboxerMetrics } from '../metrics/index.js';
import { TargetedFailure } from './errors.js';
import type { HttpSettings } from './relay-settings.js';

/**
 * The daemon's metrics (`outboxer/metrics`, loaded only when the HTTP server is on). `prom-client` is an optional
 * peer: without it the server still runs, `/metrics` answers 404, and a warning says what to install.
 */
export async function loadDaemonMetrics(logger: Logger): Promise<OutboxerMetrics | undefined> {
  try {
    const { OutboxerMetrics } = await import('../metrics/index.js');
    return new OutboxerMetrics();
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    logger.warn({ error: describeError(error) }, 'prom-client is not installed: /metrics answers 404; install it next to outboxer (npm install prom-client)');
    return undefined;
  }
}

export interface DaemonOpsServer {
  readonly url: string;
  /** Stops listening and stops observing the relay and the store. */
  close(): Promise<void>;
}

/**
 * Starts the HTTP server of operations for the daemon's store and relay, with the metrics observing both. A
 * failure to listen (port taken, address not of this machine) is a failure of the HTTP server, not of the
 * database: it is reported as such.
 */
export async function startDaemonOpsServer(
  settings: HttpSettings,
  parts: { readonly store: CliStore; readonly relay: Relay; readonly metrics: OutboxerMetrics | undefined; readonly logger: Logger },
): Promise<DaemonOpsServer> {
  const { createOpsServer } = await import('../http/index.js');
  const { store, relay, metrics, logger } = parts;
  const stopObserving = metrics === undefined ? [] : [metrics.observeRelay(relay), metrics.observeStore(store)];
  const server = createOpsServer({
    operator: store,
    relay,
    ...(metrics === undefined ? {} : { metrics }),
    host: settings.host,
    port: settings.port,
    ...(settings.adminToken === undefined ? {} : { adminToken: settings.adminToken }),
    logger,
  });
  const unobserve = () => {
    for (const stop of stopObserving.splice(0)) stop();
  };
  try {
    const { url } = await server.listen();
    return {
      url,
      async close() {
        await server.close();
        unobserve();
      },
    };
  } catch (error) {
    unobserve();
    throw new TargetedFailure(error, { what: 'http server', urls: [] });
  }
}
