import { state } from './dashboard-state.js';

/** The server refused a request: its message (or `HTTP <status>`), and the status. */
export class RequestError extends Error {
  readonly code = 'DASHBOARD_REQUEST_FAILED';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'RequestError';
  }
}

/** The status of a failed request, undefined when the server was not reached. */
export function statusOf(error: unknown): number | undefined {
  return error instanceof RequestError ? error.status : undefined;
}

/** The text of a failure, whatever was thrown. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * One request to the API of this server, never with cookies. The token goes as `Authorization: Bearer` on
 * changes, and on reads when `/api/info` says reads need it. The answer is typed by the route asked (T).
 */
export async function request<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (state.token && (method !== 'GET' || state.readsNeedToken)) headers.Authorization = `Bearer ${state.token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const init: RequestInit = { method, headers, cache: 'no-store', credentials: 'omit' };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(path, init);
  const data: unknown = await response.json().catch(() => null);
  if (response.ok) return data as T;
  throw new RequestError(errorMessage(data) ?? `HTTP ${response.status}`, response.status);
}

function errorMessage(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null || !('error' in data)) return undefined;
  const { error } = data;
  if (typeof error !== 'object' || error === null || !('message' in error)) return undefined;
  return typeof error.message === 'string' && error.message ? error.message : undefined;
}
