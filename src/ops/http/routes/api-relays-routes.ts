import { json, type Route } from '../route.js';
import { supported } from '../store-failure.js';

/** `GET /api/relays`: the live relays of the table with the partitions each holds, and which one is this process's. */
export const relaysRoutes: readonly Route[] = [
  {
    method: 'GET',
    path: '/api/relays',
    access: 'read',
    async handle({ options: { operator, relay } }) {
      const group = await supported(operator.relayGroup, 'relayGroup').call(operator);
      return json({ self: relay?.health().relayId ?? null, group });
    },
  },
];
