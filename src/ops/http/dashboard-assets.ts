import { DASHBOARD_CSS } from './dashboard/dashboard-css.js';
import { DASHBOARD_HTML } from './dashboard/dashboard-html.js';
import { DASHBOARD_SCRIPT } from './dashboard/dashboard-script.generated.js';

interface Asset {
  readonly contentType: string;
  readonly body: string;
}

/**
 * The observatory (the dashboard at `/`), by request path: one page, one script, one stylesheet, no build
 * step and nothing fetched from elsewhere. The page only reads the JSON API of the same server, so it works
 * under `default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:`.
 */
export const DASHBOARD_ASSETS: ReadonlyMap<string, { readonly contentType: string; readonly body: string }> = new Map<string, Asset>([
  ['/', Object.freeze({ contentType: 'text/html; charset=utf-8', body: DASHBOARD_HTML })],
  ['/dashboard.js', Object.freeze({ contentType: 'text/javascript; charset=utf-8', body: DASHBOARD_SCRIPT })],
  ['/dashboard.css', Object.freeze({ contentType: 'text/css; charset=utf-8', body: DASHBOARD_CSS })],
]);
