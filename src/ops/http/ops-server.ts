import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describeError, OutboxerError } from '../../core/errors.js';
import { type AccessPolicy, authorize, isLoopbackAddress } from './access-control.js';
import { readJsonBody } from './json-body.js';
import { OpsHttpError } from './ops-http-error.js';
import { OperatorAccess } from './operator-access.js';
import { type OpsServerOptions, type ResolvedOpsServerOptions, resolveOpsServerOptions } from './ops-server-options.js';
import { readQuery } from './query-parameters.js';
import { parseRequestTarget } from './request-target.js';
import type { Reply } from './route.js';
import { Router } from './router.js';
import { deadRoutes } from './routes/api-dead-routes.js';
import { pendingRoutes } from './routes/api-pending-routes.js';
import { relaysRoutes } from './routes/api-relays-routes.js';
import { statsRoutes } from './routes/api-stats-routes.js';
import { destinationsRoutes } from './routes/api-destinations-routes.js';
import { topicsRoutes } from './routes/api-topics-routes.js';
import { dashboardRoutes } from './routes/dashboard-routes.js';
import { healthRoutes } from './routes/health-routes.js';
import { metricsRoute } from './routes/metrics-route.js';
import { securityHeaders } from './security-headers.js';
import { storeFailure } from './store-failure.js';
import { StoreGate } from './store-gate.js';

/** Where a listening server can be reached. */
export interface OpsServerAddress {
  /** `http://127.0.0.1:9465`, an IPv6 address in brackets. */
  readonly url: string;
  /** The address bound (`127.0.0.1`, `0.0.0.0`, `::`). */
  readonly host: string;
  readonly port: number;
}

/** The HTTP server of operations: health, metrics, the admin API and the dashboard (docs/http-api.md). */
export interface OpsServer {
  /** Starts listening; resolves with the address (the port chosen when `port` was 0). A second call gives the same address. */
  listen(): Promise<OpsServerAddress>;
  /** Stops listening, closes idle keep-alive connections at once and busy ones after their response (at most 2 s). */
  close(): Promise<void>;
}

/** How long `close()` lets a request in progress finish before its connection is cut. */
const CLOSE_GRACE_MS = 2000;
/** Connections served at once; more are refused by the socket (bounded resources). */
const MAX_CONNECTIONS = 256;

/**
 * The server of operations on `node:http`, for a relay embedded in an application or the `outboxer relay` daemon.
 *
 * @example
 * const server = createOpsServer({ operator: store, relay, metrics, adminToken: process.env.OUTBOXER_ADMIN_TOKEN });
 * await server.listen(); // http://127.0.0.1:9465
 * // ...
 * await server.close();
 */
export function createOpsServer(options: OpsServerOptions): OpsServer {
  return new NodeOpsServer(resolveOpsServerOptions(options));
}

class NodeOpsServer implements OpsServer {
  readonly #options: ResolvedOpsServerOptions;
  readonly #router = new Router([
    ...healthRoutes,
    metricsRoute,
    ...statsRoutes,
    ...deadRoutes,
    ...pendingRoutes,
    ...topicsRoutes,
    ...destinationsRoutes,
    ...relaysRoutes,
    ...dashboardRoutes,
  ]);
  readonly #server: Server;
  /** The store as every route reaches it: bounded calls, shared reads. */
  readonly #store: OperatorAccess;
  #policy: AccessPolicy = { token: undefined, readRequiresToken: true };
  #listening: Promise<OpsServerAddress> | undefined;
  #closing = false;

  constructor(options: ResolvedOpsServerOptions) {
    this.#options = options;
    this.#store = new OperatorAccess(options.operator, new StoreGate(options.storeLimits, options.logger));
    this.#server = createServer({ requestTimeout: 30_000, headersTimeout: 10_000, keepAliveTimeout: 5_000 }, (request, response) => {
      void this.#serve(request, response);
    });
    this.#server.maxConnections = MAX_CONNECTIONS;
  }

  listen(): Promise<OpsServerAddress> {
    if (this.#closing) return Promise.reject(new OutboxerError('OUTBOXER_CLOSED', 'this ops server was closed; create a new one with createOpsServer'));
    this.#listening ??= new Promise<OpsServerAddress>((resolve, reject) => {
      const { host, port, token, logger } = this.#options;
      const failed = (error: Error) => {
        this.#listening = undefined;
        reject(error);
      };
      this.#server.once('error', failed);
      this.#server.listen({ host, port }, () => {
        this.#server.off('error', failed);
        this.#server.on('error', (error) => logger.error({ error: describeError(error) }, 'ops http server error'));
        const { address, port: bound } = this.#server.address() as AddressInfo;
        this.#policy = Object.freeze({ token, readRequiresToken: !isLoopbackAddress(address) });
        const url = `http://${address.includes(':') ? `[${address}]` : address}:${bound}`;
        const mutations = token === undefined ? 'disabled' : 'enabled';
        logger.info({ url, mutations, readRequiresToken: this.#policy.readRequiresToken }, 'ops http server listening');
        if (this.#policy.readRequiresToken && token === undefined) {
          logger.warn({ url }, 'ops http server listens beyond loopback without an admin token: only /health and the dashboard files answer');
        }
        resolve(Object.freeze({ url, host: address, port: bound }));
      });
    });
    return this.#listening;
  }

  async close(): Promise<void> {
    this.#closing = true;
    await this.#listening?.catch(() => undefined);
    if (!this.#server.listening) return;
    const grace = setTimeout(() => this.#server.closeAllConnections(), CLOSE_GRACE_MS);
    grace.unref();
    try {
      await new Promise<void>((resolve, reject) => {
        this.#server.close((error) => (error === undefined ? resolve() : reject(error)));
        this.#server.closeIdleConnections();
      });
    } finally {
      clearTimeout(grace);
    }
  }

  async #serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    let reply: Reply;
    let headers: Readonly<Record<string, string>> = {};
    try {
      reply = await this.#answer(request);
    } catch (error) {
      const problem = error instanceof OpsHttpError ? error : storeFailure(error);
      if (!(error instanceof OpsHttpError)) {
        this.#options.logger.error({ method: request.method, error: describeError(error) }, 'ops http request failed');
      }
      reply = { status: problem.status, json: { error: { code: problem.code, message: problem.message } } };
      headers = problem.headers;
    }
    this.#send(request, response, reply, headers);
  }

  /** The checks in a fixed order: target (400), route (404), method (405), access (401/403), query (400), body (415/413/400), then the handler. */
  async #answer(request: IncomingMessage): Promise<Reply> {
    const target = parseRequestTarget(request.url ?? '');
    const route = this.#router.match(target.path, request.method);
    authorize(route.access, { authorization: request.headers.authorization, host: request.headers.host }, this.#policy);
    const query = readQuery(target.query, route.query);
    const body = route.method === 'POST' ? await readJsonBody(request) : undefined;
    return route.handle({
      options: this.#options,
      store: this.#store,
      query,
      body,
      readRequiresToken: this.#policy.readRequiresToken,
      remoteAddress: request.socket.remoteAddress,
    });
  }

  #send(request: IncomingMessage, response: ServerResponse, reply: Reply, extra: Readonly<Record<string, string>>): void {
    if (response.headersSent || response.destroyed) return;
    const isJson = 'json' in reply;
    const body = isJson ? `${JSON.stringify(reply.json)}\n` : reply.text;
    const headers: Record<string, string> = {
      ...securityHeaders(!isJson && reply.page === true),
      ...extra,
      'Content-Type': isJson ? 'application/json; charset=utf-8' : reply.contentType,
      'Content-Length': String(Buffer.byteLength(body)),
    };
    // A body left unread (refused before it was read, or cut at the limit) is not read on: the connection ends.
    if (!request.complete || this.#closing) headers.Connection = 'close';
    response.writeHead(reply.status, headers);
    response.end(body);
  }
}
