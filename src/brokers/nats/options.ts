import { z } from 'zod';
import { ConfigurationError } from '../../core/errors.js';
import { silentLogger } from '../../core/logger.js';
import { isLoggerLike, parseOptions, wholeNumber } from '../../core/parse-options.js';
import type { Logger } from '../../core/ports.js';
import { redactUrl, scrubSecrets, secretsOfUrl } from '../../core/redact.js';
import { type CloudEventsOptions, cloudEventsOptionSchema, type ResolvedCloudEvents } from '../cloudevents.js';

export interface NatsPublisherOptions {
  /**
   * One server URL or several (a cluster): `nats://host:4222`, `tls://host:4222` or `host:4222`.
   * Credentials may ride in the URL (`nats://user:pass@host:4222`, or `nats://token@host:4222`):
   * they are taken out of the URL, handed to the client as user/pass (or token), and never printed.
   */
  readonly servers: string | readonly string[];
  /** When set, the subject is `${subjectPrefix}.${topic}`. NATS subject tokens only (no spaces or wildcards). */
  readonly subjectPrefix?: string | undefined;
  /** Bound on one publish, connecting and waiting for a reconnect included. Default 10000. */
  readonly publishTimeoutMs?: number | undefined;
  /** Bound on the connection handshake. Default 10000. */
  readonly connectTimeoutMs?: number | undefined;
  /** Largest body (in bytes, as published) to send; default: the server's `max_payload`, learned on connect. */
  readonly maxMessageBytes?: number | undefined;
  /** pino-compatible logger; default: silent. */
  readonly logger?: Logger | undefined;
  /** Client connection name shown by the server's monitoring (`/connz`). Default `outboxer`. */
  readonly name?: string | undefined;
  /** Also publish as CloudEvents in binary content mode (`ce-*` headers, docs/publishers/nats.md). Default: off. */
  readonly cloudEvents?: CloudEventsOptions | undefined;
}

/** A server URL with its credentials taken out, as the client gets it. */
export interface NatsServer {
  /** `host:port`, no credentials: what the client dials. */
  readonly hostPort: string;
  /** The URL for people and logs: credentials replaced by `***`. */
  readonly redacted: string;
}

export interface NatsAuth {
  readonly user?: string;
  readonly pass?: string;
  readonly token?: string;
}

export interface ResolvedNatsPublisherOptions {
  readonly servers: readonly NatsServer[];
  readonly auth: NatsAuth;
  readonly tls: boolean;
  /** Every secret found in the URLs, to scrub from driver messages. */
  readonly secrets: readonly string[];
  readonly subjectPrefix: string | undefined;
  readonly publishTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly maxMessageBytes: number | undefined;
  readonly logger: Logger;
  readonly name: string;
  readonly cloudEvents: ResolvedCloudEvents | undefined;
}

export const NATS_DEFAULTS = Object.freeze({ publishTimeoutMs: 10_000, connectTimeoutMs: 10_000, name: 'outboxer' });

/** A NATS subject token as outboxer accepts it: no dots, spaces, wildcards, `$` or control characters. */
const SUBJECT_TOKEN = /^[A-Za-z0-9_\-:/]+$/;
const MAX_PREFIX_BYTES = 200;
const MAX_TIMEOUT_MS = 10 * 60_000;

/** True if `subject` is dot-separated tokens of SUBJECT_TOKEN (what both the prefix and the full subject must be). */
export function isValidSubject(subject: string): boolean {
  return subject !== '' && subject.split('.').every((token) => SUBJECT_TOKEN.test(token));
}

/** Every option but `servers` (a URL parser of its own, which keeps credentials out of messages). */
const settingsSchema = z
  .object({
    subjectPrefix: z
      .string({ error: 'must be a string' })
      .refine((prefix) => isValidSubject(prefix) && Buffer.byteLength(prefix) <= MAX_PREFIX_BYTES, {
        error: `must be dot-separated NATS subject tokens of [A-Za-z0-9_-:/] (no spaces, wildcards, $ or empty tokens), at most ${MAX_PREFIX_BYTES} bytes`,
      })
      .optional(),
    publishTimeoutMs: wholeNumber(1, MAX_TIMEOUT_MS, 'milliseconds').default(NATS_DEFAULTS.publishTimeoutMs),
    connectTimeoutMs: wholeNumber(1, MAX_TIMEOUT_MS, 'milliseconds').default(NATS_DEFAULTS.connectTimeoutMs),
    maxMessageBytes: wholeNumber(1, Number.MAX_SAFE_INTEGER, 'bytes').optional(),
    logger: z
      .custom<Logger>((value) => isLoggerLike(value, ['warn']), { error: 'must be a pino-compatible logger (debug, info, warn, error)' })
      .default(silentLogger),
    name: z
      .string({ error: 'must be a string' })
      .min(1, { error: 'must not be empty' })
      .max(200, { error: 'must be at most 200 characters' })
      .regex(/^[^\r\n\0]*$/, { error: 'must not contain line breaks or NUL' })
      .default(NATS_DEFAULTS.name),
    cloudEvents: cloudEventsOptionSchema.optional(),
  })
  .strict();

function parseServer(raw: unknown, index: number): { server: NatsServer; auth: NatsAuth; tls: boolean; secrets: string[] } {
  const option = `servers[${index}]`;
  if (typeof raw !== 'string' || raw.trim() === '') invalid(option, 'must be a non-empty URL such as nats://127.0.0.1:4222');
  const text = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(raw) ? raw : `nats://${raw}`;
  // The raw `user:pass` before the last `@` too: an unencoded `#`, `/` or `?` in a password breaks URL parsing.
  const userinfo = /^[^:]*:\/\/(.*)@/s.exec(text)?.[1] ?? '';
  const secrets = [...secretsOfUrl(text), userinfo, userinfo.slice(userinfo.indexOf(':') + 1)].filter((secret) => secret !== '');
  const shown = scrubSecrets(redactUrl(text), secrets);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    invalid(option, `${shown} is not a URL such as nats://host:4222`);
  }
  if (url.protocol !== 'nats:' && url.protocol !== 'tls:') invalid(option, `${shown} must use nats:// or tls://`);
  if (url.hostname === '') invalid(option, `${shown} has no host`);
  if ((url.pathname !== '' && url.pathname !== '/') || url.search !== '' || url.hash !== '') {
    invalid(option, `${shown} must be scheme://[user:pass@]host[:port] with no path, query or fragment`);
  }
  let user: string;
  let pass: string;
  try {
    user = decodeURIComponent(url.username);
    pass = decodeURIComponent(url.password);
  } catch {
    invalid(option, `${shown} has malformed percent-encoding in its credentials`);
  }
  let auth: NatsAuth = {};
  if (user !== '' && pass !== '') auth = { user, pass };
  else if (user !== '') {
    auth = { token: user }; // nats://token@host, as the other NATS clients read it
    secrets.push(user, url.username);
  }
  const port = url.port === '' ? '4222' : url.port;
  return { server: { hostPort: `${url.hostname}:${port}`, redacted: shown }, auth, tls: url.protocol === 'tls:', secrets };
}

function sameAuth(a: NatsAuth, b: NatsAuth): boolean {
  return a.user === b.user && a.pass === b.pass && a.token === b.token;
}

function invalid(option: string, problem: string, options: readonly string[] = [option]): never {
  throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `nats publisher option ${option}: ${problem}`, { options });
}

/** Resolves the options once: documented defaults, validated, frozen. Invalid → ConfigurationError naming the option. */
export function resolveNatsPublisherOptions(input: NatsPublisherOptions): ResolvedNatsPublisherOptions {
  if (typeof input !== 'object' || input === null) invalid('(root)', 'an options object with at least servers is required', []);
  const { servers, ...rest } = input;
  const settings = parseOptions(settingsSchema, rest, 'nats publisher', { alsoKnown: ['servers'], quoteUnknown: true });
  const list: readonly unknown[] = typeof servers === 'string' ? [servers] : Array.isArray(servers) ? servers : [];
  if (list.length === 0) invalid('servers', 'is required: a URL such as nats://127.0.0.1:4222, or a non-empty array of them');
  const parsed = list.map((raw, index) => parseServer(raw, index));
  let auth: NatsAuth = {};
  for (const entry of parsed) {
    if (Object.keys(entry.auth).length === 0) continue;
    if (Object.keys(auth).length > 0 && !sameAuth(auth, entry.auth)) {
      invalid(
        'servers',
        'carry different credentials; the client authenticates to every server of a cluster the same way: give each URL the same user and password',
      );
    }
    auth = entry.auth;
  }
  const tls = parsed.some((entry) => entry.tls);
  if (tls && !parsed.every((entry) => entry.tls)) invalid('servers', 'mix nats:// and tls://; use one scheme for all');
  const resolved = {
    ...settings,
    subjectPrefix: settings.subjectPrefix,
    maxMessageBytes: settings.maxMessageBytes,
    servers: Object.freeze(parsed.map((entry) => Object.freeze(entry.server))),
    tls,
    cloudEvents: settings.cloudEvents,
  };
  // Credentials stay off the enumerable surface: JSON.stringify or console.log of the options never shows them.
  Object.defineProperty(resolved, 'auth', { value: Object.freeze(auth), enumerable: false });
  Object.defineProperty(resolved, 'secrets', { value: Object.freeze([...new Set(parsed.flatMap((entry) => entry.secrets))]), enumerable: false });
  return Object.freeze(resolved as typeof resolved & Pick<ResolvedNatsPublisherOptions, 'auth' | 'secrets'>);
}
