import { relayReadiness } from '../../../core/relay-readiness.js';
import { json, type Route } from '../route.js';

/**
 * Liveness and readiness, open to anyone (probes send no token). Ready follows `relayReadiness`; a server
 * without a relay (the admin API alone) is ready while it listens.
 */
export const healthRoutes: readonly Route[] = [
  { method: 'GET', path: '/health/live', access: 'public', handle: async () => json({ status: 'live' }) },
  {
    method: 'GET',
    path: '/health/ready',
    access: 'public',
    async handle({ options }) {
      if (options.relay === undefined) return json({ status: 'ready' });
      const { ready, reasons } = relayReadiness(options.relay.health());
      return ready ? json({ status: 'ready' }) : json({ status: 'not ready', reasons }, 503);
    },
  },
];
