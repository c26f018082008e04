import { OpsHttpError } from './ops-http-error.js';
import type { Route } from './route.js';

/** Exact paths to their routes by method; built once, never changed. */
export class Router {
  readonly #routes = new Map<string, Map<string, Route>>();

  constructor(routes: readonly Route[]) {
    for (const route of routes) {
      const methods = this.#routes.get(route.path) ?? new Map<string, Route>();
      if (methods.has(route.method)) throw new Error(`two routes for ${route.method} ${route.path}`);
      methods.set(route.method, route);
      this.#routes.set(route.path, methods);
    }
  }

  /**
   * The route for a plain path and a method: 404 for a path that is no endpoint (matched exactly: no trailing
   * slash, case-sensitive), 405 with `Allow` for a method the path does not take. `HEAD` is `GET` without the body.
   */
  match(path: string, method: string | undefined): Route {
    const methods = this.#routes.get(path);
    if (methods === undefined) {
      throw new OpsHttpError(
        404,
        'OUTBOXER_NOT_FOUND',
        `no endpoint at ${path.slice(0, 100)}${path.length > 1 && path.endsWith('/') ? ' (paths take no trailing slash)' : ''}; docs/http-api.md lists them`,
      );
    }
    const route = methods.get(method === 'HEAD' ? 'GET' : (method ?? ''));
    if (route !== undefined) return route;
    const allow = [...methods.keys()].flatMap((name) => (name === 'GET' ? ['GET', 'HEAD'] : [name])).join(', ');
    throw new OpsHttpError(405, 'OUTBOXER_METHOD_NOT_ALLOWED', `${path} takes ${allow}`, { Allow: allow });
  }
}
