import { OpsHttpError } from './ops-http-error.js';
import type { MetricsSource } from './ops-server-options.js';

/**
 * A stand-in for a registry that could not be made (the relay daemon without the optional `prom-client`): `/metrics`
 * answers 501 `OUTBOXER_NOT_SUPPORTED` with `reason`, which says what to install, rather than a bare 404.
 */
export function unavailableMetrics(reason: string): MetricsSource {
  return Object.freeze({
    contentType: 'text/plain; charset=utf-8',
    metrics: () => Promise.reject(new OpsHttpError(501, 'OUTBOXER_NOT_SUPPORTED', reason)),
  });
}
