import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { WebhookEndpoint } from './endpoint.js';

/** The status and headers of an answer; its body is read and thrown away, never kept or shown. */
export interface HttpAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
}

/**
 * Idle kept-alive connections are closed after this long, below the 5 s that Node servers (and many others)
 * keep them: reusing a connection the server is closing fails the POST with ECONNRESET, and a POST is not
 * retried by itself. Node also honours a shorter `Keep-Alive: timeout=` hint from the server.
 */
const IDLE_SOCKET_MS = 4000;

/** Keep-alive connection pools of one publisher, destroyed when it closes. */
export class HttpPools {
  readonly #http = new HttpAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS });
  readonly #https = new HttpsAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS });

  /**
   * Sends one request and resolves with the answer's status and headers (no redirect is followed: node:http
   * never does). Rejects with the driver's error, or with `signal.reason` once aborted.
   */
  send(
    endpoint: WebhookEndpoint,
    method: 'POST' | 'HEAD' | 'OPTIONS',
    headers: Readonly<Record<string, string>>,
    body: Buffer | undefined,
    signal: AbortSignal,
  ): Promise<HttpAnswer> {
    return new Promise<HttpAnswer>((resolve, reject) => {
      const all = endpoint.authorization === undefined || 'authorization' in headers ? headers : { ...headers, authorization: endpoint.authorization };
      const options = { method, headers: all, signal };
      const request = endpoint.secure
        ? httpsRequest(endpoint.href, { ...options, agent: this.#https })
        : httpRequest(endpoint.href, { ...options, agent: this.#http });
      request.on('error', (error) => reject(signal.aborted ? signal.reason : error));
      request.once('response', (response) => {
        response.on('error', () => undefined);
        response.resume();
        resolve({ status: response.statusCode ?? 0, headers: response.headers });
      });
      request.end(body);
    });
  }

  /** Closes every pooled connection (requests still running are cut). */
  destroy(): void {
    this.#http.destroy();
    this.#https.destroy();
  }
}
