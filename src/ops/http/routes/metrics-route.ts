import { OpsHttpError } from '../ops-http-error.js';
import type { Route } from '../route.js';

/** `GET /metrics`: the Prometheus text of the registry given as `metrics` (a read: beyond loopback it needs the token). */
export const metricsRoute: Route = {
  method: 'GET',
  path: '/metrics',
  access: 'read',
  async handle({ options }) {
    const { metrics } = options;
    if (metrics === undefined) {
      throw new OpsHttpError(404, 'OUTBOXER_NOT_FOUND', 'this server was given no metrics registry (the metrics option; the relay daemon needs prom-client installed)');
    }
    return { status: 200, text: await metrics.metrics(), contentType: metrics.contentType };
  },
};
