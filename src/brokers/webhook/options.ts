import { z } from 'zod';
import { ConfigurationError } from '../../core/errors.js';
import { silentLogger } from '../../core/logger.js';
import type { Logger } from '../../core/ports.js';
import { parseEndpoint, type WebhookEndpoint } from './endpoint.js';
import { compileTopicPattern, topicPatternFault, type TopicPattern } from '../../core/topic-pattern.js';
import { signingKeyOf } from './signature.js';
import { isReservedHeader } from './wire.js';

/** One entry of `routes`: messages whose topic matches `topic` go to `url`. */
export interface WebhookRoute {
  /** An exact topic (`orders.created`) or a pattern: `*` matches one dot-separated part, `#` zero or more. */
  readonly topic: string;
  /** `http://` or `https://` endpoint; `https://user:pass@host/...` sends HTTP Basic credentials. */
  readonly url: string;
}

const MAX_TIMER_MS = 2_147_483_647;

const webhookOptionsSchema = z
  .object({
    /** Endpoint for every topic no route matches. Default: none (such a topic is paused, see the docs). */
    url: z.string().optional(),
    /** Per-topic endpoints, first match wins. Default: none. */
    routes: z
      .array(z.object({ topic: z.string(), url: z.string() }).strict())
      .max(1000)
      .default([]),
    /** One `whsec_<base64>` secret, or several during a rotation (each signs every request). Required. */
    secret: z.union([z.string(), z.array(z.string()).min(1).max(10)]),
    /** Static request headers (e.g. `authorization`). Default: none. */
    headers: z.record(z.string(), z.string()).default({}),
    /** Longest one publish may take: waiting for a request slot, connecting, sending and the answer. Default 10000. */
    publishTimeoutMs: z.number().int().min(1).max(MAX_TIMER_MS).default(10_000),
    /** Requests in flight to one origin (scheme, host, port) at most; more wait for a slot. Default 16. */
    maxConcurrencyPerEndpoint: z.number().int().min(1).max(10_000).default(16),
    /** Longest `Retry-After` honoured; a longer one is cut to this. Default 3600000 (1 hour). */
    maxRetryAfterMs: z.number().int().min(0).max(MAX_TIMER_MS).default(3_600_000),
    /** Largest body to send; larger ones fail permanently without a request. Default: none (the receiver decides, 413). */
    maxMessageBytes: z.number().int().min(1).optional(),
    /** `verify()` sends this request (never a POST) to each endpoint; any HTTP answer but 401/403 passes. Default: none. */
    verifyProbe: z.enum(['HEAD', 'OPTIONS']).optional(),
  })
  .strict();

export type WebhookPublisherOptions = z.input<typeof webhookOptionsSchema> & {
  /** pino-compatible logger. Default: silent. */
  readonly logger?: Logger | undefined;
};

export interface ResolvedWebhookRoute {
  readonly topic: TopicPattern;
  readonly endpoint: WebhookEndpoint;
}

export interface ResolvedWebhookPublisherOptions {
  readonly defaultEndpoint: WebhookEndpoint | undefined;
  readonly routes: readonly ResolvedWebhookRoute[];
  /** Signing keys, in the order given. Not enumerable. */
  readonly signingKeys: readonly Buffer[];
  /** Static headers, names in lowercase. Not enumerable (an authorization header is a credential). */
  readonly headers: Readonly<Record<string, string>>;
  /** Every secret the options hold, to scrub from driver messages. Not enumerable. */
  readonly secrets: readonly string[];
  readonly publishTimeoutMs: number;
  readonly maxConcurrencyPerEndpoint: number;
  readonly maxRetryAfterMs: number;
  readonly maxMessageBytes: number | undefined;
  readonly verifyProbe: 'HEAD' | 'OPTIONS' | undefined;
  readonly logger: Logger;
}

/** An HTTP token (RFC 9110 §5.6.2) and a field value of visible ASCII, space and tab. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const FIELD_VALUE = /^[\t\x20-\x7e]*$/;

function fail(option: string, problem: string, options: readonly string[] = [option]): never {
  throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `webhook publisher option ${option}: ${problem}`, { options });
}

function endpointOf(raw: string, option: string, source: string): WebhookEndpoint {
  const endpoint = parseEndpoint(raw, source);
  if (typeof endpoint === 'string') fail(option, endpoint);
  return endpoint;
}

function resolveHeaders(headers: Readonly<Record<string, string>>, withUrlCredentials: boolean): Record<string, string> {
  const resolved: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    const option = `headers.${name.slice(0, 60)}`;
    if (!TOKEN.test(name))
      fail(`headers[${JSON.stringify(name.slice(0, 60))}]`, "is not an HTTP header name (letters, digits and !#$%&'*+-.^_`|~)", ['headers']);
    if (!FIELD_VALUE.test(value)) fail(option, 'must be visible ASCII, spaces or tabs (value hidden)');
    if (isReservedHeader(lower)) fail(option, 'is set by the publisher (content-type, webhook-*, outbox-*, or HTTP framing); remove it');
    if (lower in resolved) fail(option, 'is given twice (header names ignore case)');
    if (lower === 'authorization' && withUrlCredentials) fail(option, 'conflicts with credentials in a URL; give them in one place', ['headers', 'url']);
    resolved[lower] = value;
  }
  return resolved;
}

/** Resolves the options once: documented defaults, validated, frozen. Throws a ConfigurationError naming the option and the fix. */
export function resolveWebhookPublisherOptions(input: WebhookPublisherOptions): ResolvedWebhookPublisherOptions {
  if (typeof input !== 'object' || input === null) fail('(root)', 'an options object with url or routes, and secret, is required');
  const { logger, ...rest } = input;
  const parsed = webhookOptionsSchema.safeParse(rest);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.join('.') ?? '';
    // zod messages name the expected type, never the value given: safe with a secret
    fail(path || '(root)', issue?.message ?? 'invalid', path === '' ? [] : [path]);
  }
  const options = parsed.data;
  if (
    logger !== undefined &&
    !(['debug', 'info', 'warn', 'error'] as const).every((level) => typeof (logger as unknown as Record<string, unknown>)[level] === 'function')
  ) {
    fail('logger', 'must have debug, info, warn and error methods (pino fits)');
  }
  if (options.url === undefined && options.routes.length === 0) fail('url', 'a default url or at least one route is required', ['url', 'routes']);
  const defaultEndpoint = options.url === undefined ? undefined : endpointOf(options.url, 'url', 'default url');
  const routes = options.routes.map((route, index) => {
    const fault = topicPatternFault(route.topic);
    if (fault !== undefined) fail(`routes[${index}].topic`, fault);
    return Object.freeze({
      topic: compileTopicPattern(route.topic),
      endpoint: endpointOf(route.url, `routes[${index}].url`, `route ${JSON.stringify(route.topic)}`),
    });
  });
  const secrets = typeof options.secret === 'string' ? [options.secret] : options.secret;
  const signingKeys = secrets.map((secret, index) => {
    const key = signingKeyOf(secret);
    if (typeof key === 'string') fail(typeof options.secret === 'string' ? 'secret' : `secret[${index}]`, key, ['secret']);
    return key;
  });
  const endpoints = [...(defaultEndpoint === undefined ? [] : [defaultEndpoint]), ...routes.map((route) => route.endpoint)];
  const headers = resolveHeaders(
    options.headers,
    endpoints.some((endpoint) => endpoint.authorization !== undefined),
  );
  const resolved = {
    defaultEndpoint,
    routes: Object.freeze(routes),
    publishTimeoutMs: options.publishTimeoutMs,
    maxConcurrencyPerEndpoint: options.maxConcurrencyPerEndpoint,
    maxRetryAfterMs: options.maxRetryAfterMs,
    maxMessageBytes: options.maxMessageBytes,
    verifyProbe: options.verifyProbe,
    logger: logger ?? silentLogger,
  };
  const allSecrets = [
    ...secrets,
    ...secrets.map((secret) => secret.slice('whsec_'.length)),
    ...Object.values(headers),
    ...endpoints.flatMap((endpoint) => endpoint.secrets),
  ];
  Object.defineProperty(resolved, 'signingKeys', { value: Object.freeze(signingKeys), enumerable: false });
  Object.defineProperty(resolved, 'headers', { value: Object.freeze(headers), enumerable: false });
  Object.defineProperty(resolved, 'secrets', { value: Object.freeze(allSecrets.filter((secret) => secret.length >= 4)), enumerable: false });
  return Object.freeze(resolved) as ResolvedWebhookPublisherOptions;
}
