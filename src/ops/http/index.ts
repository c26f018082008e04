/**
 * `outboxer/http`: the HTTP server of operations (health, Prometheus metrics, the admin API and the dashboard)
 * on `node:http`, for an embedded relay; the `outboxer relay` daemon serves the same with `--http-port`.
 * docs/http-api.md describes every endpoint and the security model.
 */
export { createOpsServer, type OpsServer, type OpsServerAddress } from './ops-server.js';
export { checkOpsServerSettings, DEFAULT_OPS_PORT, type MetricsSource, type OpsServerOptions, type OpsServerSettings } from './ops-server-options.js';
export { OpsHttpError, type OpsHttpErrorCode } from './ops-http-error.js';
export { MIN_ADMIN_TOKEN_LENGTH } from './admin-token.js';
export { MAX_BODY_BYTES } from './json-body.js';
export { DASHBOARD_CONTENT_SECURITY_POLICY } from './security-headers.js';
export { relayReadiness, type RelayReadiness } from '../../core/relay-readiness.js';
