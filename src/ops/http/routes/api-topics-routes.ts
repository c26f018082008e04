import type { OutboxOperator } from '../../../core/ports/outbox-operator.js';
import { pauseRequest, resumeRequest } from '../request-bodies.js';
import { json, type Route } from '../route.js';
import { supported } from '../store-failure.js';
import { TopicLagCache } from '../topic-lag-cache.js';
import { audit } from './audit.js';

/** One lag cache per store, shared by every server and request (many dashboards cost one read every few seconds). */
const lagCaches = new WeakMap<OutboxOperator, TopicLagCache>();

function lagCache(operator: OutboxOperator): TopicLagCache {
  const topicLag = supported(operator.topicLag, 'topicLag');
  let cache = lagCaches.get(operator);
  if (cache === undefined) {
    cache = new TopicLagCache((limit) => topicLag.call(operator, limit));
    lagCaches.set(operator, cache);
  }
  return cache;
}

/** Topics: their backlog (`GET /api/topics?limit=`), the operators' pauses, and `POST` pause and resume. */
export const topicsRoutes: readonly Route[] = [
  {
    method: 'GET',
    path: '/api/topics',
    access: 'read',
    query: { limit: { min: 1, max: 1000, default: 50 } },
    async handle({ options: { operator }, query }) {
      const { at, topics } = await lagCache(operator).get(query.limit ?? 50);
      return json({ at: at.toISOString(), topics });
    },
  },
  {
    method: 'GET',
    path: '/api/topics/paused',
    access: 'read',
    async handle({ options: { operator } }) {
      return json({ paused: await supported(operator.pausedTopics, 'pausedTopics').call(operator) });
    },
  },
  {
    method: 'POST',
    path: '/api/topics/pause',
    access: 'change',
    async handle(context) {
      const { operator } = context.options;
      const pause = supported(operator.pauseTopic, 'pauseTopic');
      const { topic, reason } = pauseRequest(context.body);
      const paused = await pause.call(operator, topic, reason);
      audit(context, 'topics.pause', paused ? 'topic paused' : 'topic was paused already', { topic, reason, changed: paused ? 1 : 0 });
      return json({ paused });
    },
  },
  {
    method: 'POST',
    path: '/api/topics/resume',
    access: 'change',
    async handle(context) {
      const { operator } = context.options;
      const resume = supported(operator.resumeTopic, 'resumeTopic');
      const { topic } = resumeRequest(context.body);
      const resumed = await resume.call(operator, topic);
      audit(context, 'topics.resume', resumed ? 'topic resumed' : 'topic was not paused', { topic, changed: resumed ? 1 : 0 });
      return json({ resumed });
    },
  },
];
