import type { Access } from './access-control.js';
import type { ResolvedOpsServerOptions } from './ops-server-options.js';
import type { QueryParameters } from './query-parameters.js';

/** What a handler gets: the server's options, the checked query, the JSON body (POST), and who asked (for audit lines). */
export interface RouteContext {
  readonly options: ResolvedOpsServerOptions;
  readonly query: Readonly<Record<string, number>>;
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
