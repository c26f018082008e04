/**
 * The dashboard's policy: its own script, stylesheet and API only; no inline script or style, no other origin,
 * never framed. `data:` images for its icon.
 */
export const DASHBOARD_CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Every other response (JSON, Prometheus text) loads nothing and is never framed. */
const DATA_CONTENT_SECURITY_POLICY = "default-src 'none'; frame-ancestors 'none'";

/**
 * Headers on every response: nothing cached or sniffed, never framed, no referrer, isolated from other origins.
 * There is deliberately no `Access-Control-*` header (no CORS) and never a `Set-Cookie`.
 */
export function securityHeaders(page: boolean): Record<string, string> {
  return {
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Resource-Policy': 'same-origin',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Content-Security-Policy': page ? DASHBOARD_CONTENT_SECURITY_POLICY : DATA_CONTENT_SECURITY_POLICY,
  };
}
