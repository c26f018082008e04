import { MAX_LIST_LIMIT } from '../operator-access.js';
import { pauseRequest, resumeRequest } from '../request-bodies.js';
import { json, type Route } from '../route.js';
import { audit } from './audit.js';

/**
 * Topics: their backlog per destination (`GET /api/topics?limit=`) with the relays' own pauses (a missing destination, read from the
 * held rows in the same pass), the operators' pauses, and `POST` pause and resume.
 */
export const topicsRoutes: readonly Route[] = [
  {
    method: 'GET',
    path: '/api/topics',
    access: 'read',
    query: { limit: { min: 1, max: MAX_LIST_LIMIT, default: 50 } },
    async handle({ store, query }) {
      // One read every 5 s serves every limit (OperatorAccess): what a client asks does not change what it costs.
      const { at, topics } = await store.topicLag(query.limit ?? 50);
      // one entry per topic and destination (null: the relay's own publisher, `default`)
      return json({
        at: at.toISOString(),
        topics: topics.map((topic) => ({ ...topic, destination: topic.destination ?? null, relayPause: topic.relayPause ?? null })),
      });
    },
  },
  {
    method: 'GET',
    path: '/api/topics/paused',
    access: 'read',
    async handle({ store }) {
      return json({ paused: await store.pausedTopics() });
    },
  },
  {
    method: 'POST',
    path: '/api/topics/pause',
    access: 'change',
    async handle(context) {
      const { topic, reason } = pauseRequest(context.body);
      const paused = await context.store.pauseTopic(topic, reason);
      audit(context, 'topics.pause', paused ? 'topic paused' : 'topic was paused already', { topic, reason, changed: paused ? 1 : 0 });
      return json({ paused });
    },
  },
  {
    method: 'POST',
    path: '/api/topics/resume',
    access: 'change',
    async handle(context) {
      const { topic } = resumeRequest(context.body);
      const resumed = await context.store.resumeTopic(topic);
      audit(context, 'topics.resume', resumed ? 'topic resumed' : 'topic was not paused', { topic, changed: resumed ? 1 : 0 });
      return json({ resumed });
    },
  },
];
