import { json, type Route } from '../route.js';

/** `GET /api/relays`: the live relays of the table with the partitions each holds, and which one is this process's. */
export const relaysRoutes: readonly Route[] = [
  {
    method: 'GET',
    path: '/api/relays',
    access: 'read',
    async handle({ options: { relay }, store }) {
      const group = await store.relayGroup();
      return json({ self: relay?.health().relayId ?? null, group });
    },
  },
];
