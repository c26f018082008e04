import { ConfigurationError } from '../../../core/errors.js';
import { checkMessageId, checkPendingQuery } from '../../../core/pending-message-input.js';
import type { PendingQuery } from '../../../core/ports/pending-messages.js';
import { MAX_DESTINATION_BYTES } from '../../../core/message-rules.js';
import { pendingMessageJson } from '../../pending-message-json.js';
import { destinationQuery } from '../destination-query.js';
import { MAX_LIST_LIMIT } from '../operator-access.js';
import { OpsHttpError } from '../ops-http-error.js';
import { queryText } from '../query-parameters.js';
import { pendingDeletion } from '../request-bodies.js';
import { json, type Route } from '../route.js';
import { supported } from '../store-failure.js';
import { audit } from './audit.js';

/** The longest age filter a query takes (seven digits of seconds: about 115 days). */
const MAX_QUERY_SECONDS = 9_999_999;

/** The store's check of a query, as a 400 of this API (`OUTBOXER_INVALID_ID`, or `OUTBOXER_INVALID_QUERY` led by the store's code). */
function checked<T>(check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof ConfigurationError)
      throw new OpsHttpError(400, error.code === 'OUTBOXER_INVALID_ID' ? 'OUTBOXER_INVALID_ID' : 'OUTBOXER_INVALID_QUERY', `${error.code}: ${error.message}`);
    throw error;
  }
}

/**
 * Pending messages: `GET /api/pending` lists them in store order (filters `topic`, `key`, `olderThanSeconds`, `destination`),
 * `GET /api/pending/message?id=` shows one (its headers' values and body only when the server was started with
 * `exposePayloads`), `POST /api/pending/delete` deletes some (the admin token; audited).
 */
export const pendingRoutes: readonly Route[] = [
  {
    method: 'GET',
    path: '/api/pending',
    access: 'read',
    query: {
      limit: { min: 1, max: MAX_LIST_LIMIT, default: 100 },
      olderThanSeconds: { min: 0, max: MAX_QUERY_SECONDS, default: 0 },
      topic: { text: true, maxBytes: 255 },
      key: { text: true, maxBytes: 512 },
      destination: { text: true, maxBytes: MAX_DESTINATION_BYTES },
    },
    async handle({ store, query }) {
      const asked: PendingQuery = {
        limit: query.limit ?? 100,
        topic: queryText(query, 'topic'),
        key: queryText(query, 'key'),
        // 0, the default, is no filter: a row committed just now may carry a creation time a little ahead of the read's
        olderThanSeconds: query.olderThanSeconds === 0 ? undefined : query.olderThanSeconds,
      };
      // the destination is checked by its own query rule (`default` is the relay's own publisher) and added after
      const wanted: PendingQuery = { ...checked(() => checkPendingQuery(asked)), ...destinationQuery(query) };
      // through the server's bound on store calls (OperatorAccess.run): distinct filters cannot multiply them
      const pending = await store.run((operator) => supported(operator.listPending, 'listPending').call(operator, wanted));
      return json({ pending: pending.map(pendingMessageJson) });
    },
  },
  {
    method: 'GET',
    path: '/api/pending/message',
    access: 'read',
    query: { id: { text: true, maxBytes: 36 } },
    async handle(context) {
      const { exposePayloads } = context.options;
      const given = queryText(context.query, 'id');
      if (given === undefined) throw new OpsHttpError(400, 'OUTBOXER_INVALID_QUERY', 'query parameter id is required: /api/pending/message?id=<uuid>');
      const id = checked(() => checkMessageId(given));
      const message = await context.store.run((operator) => supported(operator.inspectPending, 'inspectPending').call(operator, id, { body: exposePayloads }));
      if (message === undefined) {
        throw new OpsHttpError(404, 'OUTBOXER_NOT_FOUND', `no pending message ${id}: it was published, parked dead (GET /api/dead), deleted, or never stored`);
      }
      // a body leaving the database is worth a line: who read which message's content
      if (exposePayloads) audit(context, 'pending.show', 'pending message content shown', { id, changed: 0 });
      return json({ message: pendingMessageJson(message) });
    },
  },
  {
    method: 'POST',
    path: '/api/pending/delete',
    access: 'change',
    async handle(context) {
      const ids = pendingDeletion(context.body);
      const deleted = await context.store.run((operator) => supported(operator.deletePending, 'deletePending').call(operator, ids));
      audit(context, 'pending.delete', 'pending messages deleted', { requested: ids.length, ids, changed: deleted });
      return json({ deleted });
    },
  },
];
