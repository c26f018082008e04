import { OpsHttpError } from '../ops-http-error.js';
import type { Route } from '../route.js';

/**
 * `GET /metrics`: the Prometheus text of the registry given as `metrics` (a read: beyond loopback it needs the token).
 * Without a registry, 404; the daemon without prom-client gives `unavailableMetrics`, whose 501 says what to install.
 */
export const metricsRoute: Route = {
  method: 'GET',
  path: '/metrics',
  access: 'read',
  async handle({ options }) {
    const { metrics } = options;
    if (metrics === undefined) {
      throw new OpsHttpError(404, 'OUTBOXER_NOT_FOUND', 'this server was given no metrics registry (the metrics option of createOpsServer)');
    }
    return { status: 200, text: await metrics.metrics(), contentType: metrics.contentType };
  },
};
