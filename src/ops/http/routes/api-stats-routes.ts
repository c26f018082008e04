import { describeError } from '../../../core/errors.js';
import type { OutboxStats } from '../../../core/ports/outbox-operator.js';
import { OpsHttpError } from '../ops-http-error.js';
import { packageVersion } from '../package-version.js';
import { json, type Route } from '../route.js';
import type { Reading } from '../shared-read.js';
import { storeFailure } from '../store-failure.js';

/** `GET /api/info` (what this server allows) and `GET /api/stats` (counts per state, and this process's relay). */
export const statsRoutes: readonly Route[] = [
  {
    method: 'GET',
    path: '/api/info',
    access: 'read',
    handle: async ({ options, readRequiresToken }) =>
      json({
        version: packageVersion(),
        mutations: options.token === undefined ? 'disabled' : 'enabled',
        readRequiresToken,
        payloads: options.exposePayloads ? 'shown' : 'hidden',
      }),
  },
  {
    method: 'GET',
    path: '/api/stats',
    access: 'read',
    async handle({ options: { relay, logger }, store }) {
      // One stats() at a time, serving every request of the next second (OperatorAccess): many dashboards cost one.
      let stats: Reading<OutboxStats>;
      try {
        stats = await store.stats();
      } catch (error) {
        // A refusal of the server itself (busy: 503 with Retry-After) is answered as such.
        if (relay === undefined || error instanceof OpsHttpError) throw error;
        // The relay's health still answers, with its database error (which the open /health/ready never shows).
        logger.error({ method: 'GET', error: describeError(error) }, 'ops http request failed');
        const { status, code, message } = storeFailure(error);
        return json({ error: { code, message }, relay: relay.health() }, status);
      }
      return json({ at: stats.at.toISOString(), stats: stats.value, relay: relay?.health() ?? null });
    },
  },
];
