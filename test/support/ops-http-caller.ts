export type Json = Record<string, unknown>;

export interface OpsHttpAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Json;
}

export interface OpsHttpCallInit {
  readonly method?: string;
  readonly body?: unknown;
  readonly auth?: string | null;
}

export type OpsHttpCall = (base: string, path: string, init?: OpsHttpCallInit) => Promise<OpsHttpAnswer>;

/** HTTP calls to an ops server under test; POST bodies as JSON with the admin token unless told otherwise. */
export function opsHttpCaller(token: string): OpsHttpCall {
  return async (base, path, init = {}) => {
    const headers: Record<string, string> = {};
    if (init.body !== undefined) headers['Content-Type'] = 'application/json';
    const auth = init.auth === undefined ? (init.method === 'POST' ? token : null) : init.auth;
    if (auth !== null) headers.Authorization = `Bearer ${auth}`;
    const response = await fetch(`${base}${path}`, {
      method: init.method ?? 'GET',
      headers,
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text === '' ? {} : (JSON.parse(text) as Json) };
  };
}
