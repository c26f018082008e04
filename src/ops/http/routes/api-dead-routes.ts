import type { DeadMessage } from '../../../core/message.js';
import { MAX_DESTINATION_BYTES } from '../../../core/message-rules.js';
import { destinationQuery } from '../destination-query.js';
import { MAX_LIST_LIMIT } from '../operator-access.js';
import { deadSelection } from '../request-bodies.js';
import { json, type Route, type RouteContext } from '../route.js';
import { audit } from './audit.js';

/**
 * The fields of a dead message the API shows, `destination` null for the relay's own publisher (`default`).
 * There is no payload among them (a dead message carries none).
 */
function shown(message: DeadMessage) {
  const { id, topic, type, key, attempts, reason, createdAt, deadAt } = message;
  return { id, topic, destination: message.destination ?? null, type, key, attempts, reason, createdAt, deadAt };
}

async function change(context: RouteContext, action: 'retry' | 'purge'): Promise<number> {
  const { ids, destination, filter } = deadSelection(context.body);
  const { store } = context;
  const changed = action === 'retry' ? await store.retryDead(ids, filter) : await store.purgeDead(ids, filter);
  const requested = ids === 'all' ? 'all' : ids.length;
  const message = action === 'retry' ? 'dead messages moved back to pending' : 'dead messages purged';
  audit(context, `dead.${action}`, message, { requested, ...(ids === 'all' ? {} : { ids }), ...(destination === undefined ? {} : { destination }), changed });
  return changed;
}

/**
 * Dead messages: `GET /api/dead?limit=&destination=` lists them with their reasons; `POST /api/dead/retry` and
 * `/api/dead/purge` act on some or all, of one destination when the body names it.
 */
export const deadRoutes: readonly Route[] = [
  {
    method: 'GET',
    path: '/api/dead',
    access: 'read',
    query: { limit: { min: 1, max: MAX_LIST_LIMIT, default: 100 }, destination: { text: true, maxBytes: MAX_DESTINATION_BYTES } },
    async handle({ store, query }) {
      const dead = await store.listDead(query.limit ?? 100, destinationQuery(query));
      return json({ dead: dead.map(shown) });
    },
  },
  { method: 'POST', path: '/api/dead/retry', access: 'change', handle: async (context) => json({ retried: await change(context, 'retry') }) },
  { method: 'POST', path: '/api/dead/purge', access: 'change', handle: async (context) => json({ purged: await change(context, 'purge') }) },
];
