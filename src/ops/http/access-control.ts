import { isIP } from 'node:net';
import { type AdminTokenCheck, bearerToken } from './admin-token.js';
import { OpsHttpError } from './ops-http-error.js';

/** Who may call a route: anyone (`public`: health and the dashboard's static files), readers, or holders of the admin token (`change`). */
export type Access = 'public' | 'read' | 'change';

export interface AccessPolicy {
  /** Undefined when no admin token is configured: every change is refused (fail closed). */
  readonly token: AdminTokenCheck | undefined;
  /** True when the server listens beyond loopback: reads need the token too. */
  readonly readRequiresToken: boolean;
}

export interface RequestCredentials {
  readonly authorization: string | undefined;
  readonly host: string | undefined;
}

const CHALLENGE = 'Bearer realm="outboxer"';

/**
 * Decides whether a request may call a route of `access`, or throws 401/403:
 * - `change`: 403 `OUTBOXER_ADMIN_DISABLED` without a configured token; 401 `OUTBOXER_UNAUTHORIZED` unless the
 *   request carries it as `Authorization: Bearer <token>`.
 * - `read`: beyond loopback, as `change`. On loopback, open, but a token that is sent must be right, and a request
 *   without one must name a loopback host (`Host: localhost`, `127.0.0.1`, `[::1]`): a web page whose domain was
 *   rebound to 127.0.0.1 (DNS rebinding) sends its own name and is refused (403 `OUTBOXER_HOST_REFUSED`).
 */
export function authorize(access: Access, credentials: RequestCredentials, policy: AccessPolicy): void {
  if (access === 'public') return;
  const presented = credentials.authorization;
  if (access === 'read' && !policy.readRequiresToken) {
    if (presented !== undefined) checkToken(presented, policy.token, 'a token was sent with this read');
    else if (!isLoopbackHostHeader(credentials.host)) {
      throw new OpsHttpError(
        403,
        'OUTBOXER_HOST_REFUSED',
        'this server listens on loopback and serves reads without a token only to a loopback Host (localhost, 127.0.0.1, [::1]); send the admin token, or use one of those names',
      );
    }
    return;
  }
  checkToken(presented, policy.token, access === 'change' ? 'changes are disabled' : 'reads beyond loopback need the admin token');
}

/** `why` says, when no token is configured, why the request needed one. */
function checkToken(presented: string | undefined, token: AdminTokenCheck | undefined, why: string): void {
  if (token === undefined) {
    throw new OpsHttpError(
      403,
      'OUTBOXER_ADMIN_DISABLED',
      `${why}, and no admin token is configured (--admin-token, OUTBOXER_ADMIN_TOKEN or the adminToken option)`,
    );
  }
  if (presented === undefined) {
    throw new OpsHttpError(401, 'OUTBOXER_UNAUTHORIZED', 'this request needs the admin token: Authorization: Bearer <token>', {
      'WWW-Authenticate': CHALLENGE,
    });
  }
  const candidate = bearerToken(presented);
  if (candidate === undefined || !token.matches(candidate)) {
    throw new OpsHttpError(401, 'OUTBOXER_UNAUTHORIZED', 'the admin token is wrong, or not sent as Authorization: Bearer <token>', {
      'WWW-Authenticate': `${CHALLENGE}, error="invalid_token"`,
    });
  }
}

/** Whether an address the server is bound to is loopback (127.0.0.0/8, ::1, or an IPv4-mapped 127.x). */
export function isLoopbackAddress(address: string): boolean {
  const plain = address.toLowerCase().replace(/^::ffff:/, '');
  if (isIP(plain) === 4) return plain.startsWith('127.');
  return plain === '::1';
}

/** Whether a Host header names this machine's loopback: `localhost` (or `*.localhost`), a 127.x address or `[::1]`, with any port. An absent Host (HTTP/1.0) passes: browsers always send one. */
export function isLoopbackHostHeader(host: string | undefined): boolean {
  if (host === undefined) return true;
  const name = /^\[([0-9a-f:.]+)\](?::\d+)?$/i.exec(host)?.[1] ?? /^([^:[\]]+)(?::\d+)?$/.exec(host)?.[1];
  if (name === undefined) return false;
  const lower = name.toLowerCase().replace(/\.$/, '');
  return lower === 'localhost' || lower.endsWith('.localhost') || isLoopbackAddress(lower);
}
