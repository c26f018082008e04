import { destinationPauseRequest, destinationResumeRequest } from '../request-bodies.js';
import { json, type Route } from '../route.js';
import { audit } from './audit.js';

/**
 * Destinations operators paused as a whole (every topic of each; `default`: the relay's own publisher): the list
 * (`GET /api/destinations/paused`), and `POST` pause and resume, with the admin token and audited like the topic routes.
 */
export const destinationsRoutes: readonly Route[] = [
  {
    method: 'GET',
    path: '/api/destinations/paused',
    access: 'read',
    async handle({ store }) {
      return json({ paused: await store.pausedDestinations() });
    },
  },
  {
    method: 'POST',
    path: '/api/destinations/pause',
    access: 'change',
    async handle(context) {
      const { destination, reason } = destinationPauseRequest(context.body);
      const paused = await context.store.pauseDestination(destination, reason);
      audit(context, 'destinations.pause', paused ? 'destination paused' : 'destination was paused already', { destination, reason, changed: paused ? 1 : 0 });
      return json({ paused });
    },
  },
  {
    method: 'POST',
    path: '/api/destinations/resume',
    access: 'change',
    async handle(context) {
      const { destination } = destinationResumeRequest(context.body);
      const resumed = await context.store.resumeDestination(destination);
      audit(context, 'destinations.resume', resumed ? 'destination resumed' : 'destination was not paused', { destination, changed: resumed ? 1 : 0 });
      return json({ resumed });
    },
  },
];
