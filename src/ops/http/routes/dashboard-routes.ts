import { DASHBOARD_ASSETS } from '../dashboard-assets.js';
import type { Route } from '../route.js';

/** The observatory's static files (`/`, its script and stylesheet): public, as they carry no data; the page reads the API. */
export const dashboardRoutes: readonly Route[] = [...DASHBOARD_ASSETS].map(([path, asset]) => ({
  method: 'GET',
  path,
  access: 'public',
  handle: async () => ({ status: 200, text: asset.body, contentType: asset.contentType, page: true }),
}));
