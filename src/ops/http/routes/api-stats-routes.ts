import { describeError } from '../../../core/errors.js';
import type { OutboxOperator, OutboxStats } from '../../../core/ports/outbox-operator.js';
import { packageVersion } from '../package-version.js';
import { json, type Route } from '../route.js';
import { storeFailure } from '../store-failure.js';

/** One stats query at a time per store, shared by every request that arrives meanwhile (many dashboards polling cost one). */
const statsInFlight = new WeakMap<OutboxOperator, Promise<OutboxStats>>();

function sharedStats(operator: OutboxOperator): Promise<OutboxStats> {
  const running = statsInFlight.get(operator);
  if (running !== undefined) return running;
  const started = operator.stats().finally(() => statsInFlight.delete(operator));
  statsInFlight.set(operator, started);
  return started;
}

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
    async handle({ options: { operator, relay, logger } }) {
      let stats: OutboxStats;
      try {
        stats = await sharedStats(operator);
      } catch (error) {
        if (relay === undefined) throw error;
        // The relay's health still answers, with its database error (which the open /health/ready never shows).
        logger.error({ method: 'GET', error: describeError(error) }, 'ops http request failed');
        const { status, code, message } = storeFailure(error);
        return json({ error: { code, message }, relay: relay.health() }, status);
      }
      return json({ at: new Date().toISOString(), stats, relay: relay?.health() ?? null });
    },
  },
];
