import { ConfigurationError } from '../../core/errors.js';
import { silentLogger } from '../../core/logger.js';
import type { Logger } from '../../core/ports.js';
import { redactUrl, scrubSecrets, secretsOfUrl } from '../../core/redact.js';
import { type CloudEventsOptions, resolveCloudEventsOption, type ResolvedCloudEvents } from '../cloudevents.js';

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
const KNOWN_OPTIONS = new Set(['servers', 'subjectPrefix', 'publishTimeoutMs', 'connectTimeoutMs', 'maxMessageBytes', 'logger', 'name', 'cloudEvents']);

function invalid(option: string, problem: string): never {
  throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `nats publisher option ${option}: ${problem}`);
}

/** True if `subject` is dot-separated tokens of SUBJECT_TOKEN (what both the prefix and the full subject must be). */
export function isValidSubject(subject: string): boolean {
  return subject !== '' && subject.split('.').every((token) => SUBJECT_TOKEN.test(token));
}

function positiveMs(option: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_TIMEOUT_MS) {
    invalid(option, `must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}`);
  }
  return value;
}

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

/** Resolves the options once: documented defaults, validated, frozen. Invalid → ConfigurationError naming the option. */
export function resolveNatsPublisherOptions(input: NatsPublisherOptions): ResolvedNatsPublisherOptions {
  if (typeof input !== 'object' || input === null) invalid('(root)', 'options object is required');
  for (const option of Object.keys(input)) {
    if (!KNOWN_OPTIONS.has(option)) invalid(JSON.stringify(option).slice(0, 60), `is not an option; known: ${[...KNOWN_OPTIONS].join(', ')}`);
  }
  const list: readonly unknown[] = typeof input.servers === 'string' ? [input.servers] : Array.isArray(input.servers) ? input.servers : [];
  if (list.length === 0) invalid('servers', 'is required: a URL such as nats://127.0.0.1:4222, or a non-empty array of them');
  const parsed = list.map((raw, index) => parseServer(raw, index));
  let auth: NatsAuth = {};
  for (const entry of parsed) {
    if (Object.keys(entry.auth).length === 0) continue;
    if (Object.keys(auth).length > 0 && !sameAuth(auth, entry.auth)) {
      invalid('servers', 'carry different credentials; the client authenticates to every server of a cluster the same way');
    }
    auth = entry.auth;
  }
  const tls = parsed.some((entry) => entry.tls);
  if (tls && !parsed.every((entry) => entry.tls)) invalid('servers', 'mix nats:// and tls://; use one scheme for all');

  const { subjectPrefix } = input;
  if (subjectPrefix !== undefined) {
    if (typeof subjectPrefix !== 'string' || !isValidSubject(subjectPrefix) || Buffer.byteLength(subjectPrefix) > MAX_PREFIX_BYTES) {
      invalid(
        'subjectPrefix',
        `must be dot-separated NATS subject tokens of [A-Za-z0-9_-:/] (no spaces, wildcards or empty tokens), at most ${MAX_PREFIX_BYTES} bytes; got ${JSON.stringify(String(subjectPrefix).slice(0, 80))}`,
      );
    }
  }
  const { maxMessageBytes } = input;
  if (maxMessageBytes !== undefined && (typeof maxMessageBytes !== 'number' || !Number.isInteger(maxMessageBytes) || maxMessageBytes < 1)) {
    invalid('maxMessageBytes', 'must be a whole number of bytes >= 1');
  }
  const { logger } = input;
  if (logger !== undefined && (typeof logger !== 'object' || logger === null || typeof logger.warn !== 'function')) {
    invalid('logger', 'must be a pino-compatible logger (debug, info, warn, error)');
  }
  const { name } = input;
  if (name !== undefined && (typeof name !== 'string' || name === '' || name.length > 200 || /[\r\n\0]/.test(name))) {
    invalid('name', 'must be a non-empty string of at most 200 characters, without line breaks');
  }
  const resolved = {
    servers: Object.freeze(parsed.map((entry) => Object.freeze(entry.server))),
    tls,
    subjectPrefix,
    publishTimeoutMs: positiveMs('publishTimeoutMs', input.publishTimeoutMs, NATS_DEFAULTS.publishTimeoutMs),
    connectTimeoutMs: positiveMs('connectTimeoutMs', input.connectTimeoutMs, NATS_DEFAULTS.connectTimeoutMs),
    maxMessageBytes,
    logger: logger ?? silentLogger,
    name: name ?? NATS_DEFAULTS.name,
    cloudEvents: resolveCloudEventsOption(input.cloudEvents, 'nats'),
  };
  // Credentials stay off the enumerable surface: JSON.stringify or console.log of the options never shows them.
  Object.defineProperty(resolved, 'auth', { value: Object.freeze(auth), enumerable: false });
  Object.defineProperty(resolved, 'secrets', { value: Object.freeze([...new Set(parsed.flatMap((entry) => entry.secrets))]), enumerable: false });
  return Object.freeze(resolved as typeof resolved & Pick<ResolvedNatsPublisherOptions, 'auth' | 'secrets'>);
}
