import type { Access } from './access-control.js';
import type { OperatorAccess } from './operator-access.js';
import type { ResolvedOpsServerOptions } from './ops-server-options.js';
import type { QueryParameters, QueryValues } from './query-parameters.js';

/**
 * What a handler gets: the server's options, the store as the server may use it (bounded, reads shared: never
 * `options.operator` directly), the checked query, the JSON body (POST), and who asked (for audit lines).
 */
export interface RouteContext {
  /** Without the operator: a route reaches the store through `store` only, so that no client can make it unbounded. */
  readonly options: Omit<ResolvedOpsServerOptions, 'operator'>;
  readonly store: OperatorAccess;
  /** The checked query: whole numbers by name; text parameters through `queryText(query, name)`. */
  readonly query: QueryValues;
  readonly body: unknown;
  readonly readRequiresToken: boolean;
  readonly remoteAddress: string | undefined;
}

/** A handler's answer: JSON, or a static text (the dashboard's files, Prometheus text). */
export type Reply =
  | { readonly status: number; readonly json: unknown }
  | { readonly status: number; readonly text: string; readonly contentType: string; readonly page?: boolean };

/** One endpoint: `GET` routes answer `HEAD` too; `POST` routes read a JSON body. */
export interface Route {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly access: Access;
  readonly query?: QueryParameters;
  handle(context: RouteContext): Promise<Reply>;
}

export const json = (json: unknown, status = 200): Reply => ({ status, json });
