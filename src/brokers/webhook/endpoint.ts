/**
 * A destination URL as the publisher uses it. Its path and query may hold secrets (many webhook URLs carry
 * a token in the path), so only `label` (origin and route, no path) goes into errors and logs.
 */
export interface WebhookEndpoint {
  /** The URL without credentials: what is requested. Not enumerable. */
  readonly href: string;
  /** `https://host:port`: the unit the concurrency bound counts by. */
  readonly origin: string;
  readonly secure: boolean;
  /** For people: the origin and which option named it, e.g. `https://hooks.example.com (route "orders.*")`. */
  readonly label: string;
  /** `Basic <base64>` from credentials in the URL, if any. Not enumerable. */
  readonly authorization: string | undefined;
  /** The raw and decoded credentials, to scrub from driver messages. Not enumerable. */
  readonly secrets: readonly string[];
}

/** An endpoint URL, or a description of what is wrong with it (never quoting credentials, path or query). */
export function parseEndpoint(raw: unknown, source: string): WebhookEndpoint | string {
  if (typeof raw !== 'string' || raw === '') return 'must be an http:// or https:// URL';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a URL (value hidden, it may hold a secret); expected http(s)://host[:port]/path';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `must use http:// or https://; got ${url.protocol}//`;
  if (url.hostname === '') return 'has no host';
  if (url.hash !== '') return 'must not have a #fragment (it is never sent); remove it';
  const secrets: string[] = [];
  let authorization: string | undefined;
  if (url.username !== '' || url.password !== '') {
    let user: string;
    let pass: string;
    try {
      user = decodeURIComponent(url.username);
      pass = decodeURIComponent(url.password);
    } catch {
      return 'has malformed percent-encoding in its credentials';
    }
    secrets.push(url.password, pass, `${user}:${pass}`);
    authorization = `Basic ${Buffer.from(`${user}:${pass}`, 'utf8').toString('base64')}`;
    secrets.push(authorization.slice('Basic '.length));
    url.username = '';
    url.password = '';
  }
  const endpoint = { origin: url.origin, secure: url.protocol === 'https:', label: `${url.origin} (${source})` };
  Object.defineProperty(endpoint, 'href', { value: url.toString(), enumerable: false });
  Object.defineProperty(endpoint, 'authorization', { value: authorization, enumerable: false });
  Object.defineProperty(endpoint, 'secrets', { value: Object.freeze(secrets.filter((secret) => secret !== '')), enumerable: false });
  return Object.freeze(endpoint as WebhookEndpoint);
}
