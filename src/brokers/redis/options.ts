import { z } from 'zod';
import { ConfigurationError } from '../../core/errors.js';
import { silentLogger } from '../../core/logger.js';
import type { Logger } from '../../core/ports.js';
import { redactUrl, secretsOfUrl } from '../../core/redact.js';

export interface RedisPublisherOptions {
  /**
   * `redis://[[user]:password@]host[:port][/db]` or `rediss://...` (TLS, system CAs). Required. The credentials are
   * taken out of the URL and handed to the client as options; only the redacted URL is ever logged or put in an error.
   */
  readonly url: string;
  /** Prepended to the topic to name the stream: `outbox:` makes topic `orders.created` go to stream `outbox:orders.created`. Default: none. */
  readonly streamPrefix?: string | undefined;
  /** `XADD ... MAXLEN ~ <maxLen>` on every publish: the stream is trimmed to about this many entries. Default: no trimming. */
  readonly maxLen?: number | undefined;
  /** Longest a publish may take, from the call to the XADD reply (and WAIT, when `waitReplicas` is set), connecting included. Default 10000. */
  readonly publishTimeoutMs?: number | undefined;
  /** Longest a connection attempt (TCP, TLS, AUTH, SELECT) may take. Default 10000. */
  readonly connectTimeoutMs?: number | undefined;
  /** After each XADD, `WAIT <waitReplicas> <waitTimeoutMs>`: confirmed only once that many replicas have the entry. Default 0 (no WAIT). */
  readonly waitReplicas?: number | undefined;
  /** How long WAIT may block for the replicas; must be below `publishTimeoutMs`. Default 1000. */
  readonly waitTimeoutMs?: number | undefined;
  /** Largest body to send; larger ones fail permanently without a round trip. Default: none (Redis takes up to 512 MiB). */
  readonly maxMessageBytes?: number | undefined;
  /** Connection name (`CLIENT SETNAME`), as `CLIENT LIST` shows it. Default `outboxer`. */
  readonly clientName?: string | undefined;
  /** pino-compatible logger. Default: silent. */
  readonly logger?: Logger | undefined;
}

/** What the client dials, credentials apart. */
export interface RedisEndpoint {
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
  readonly database: number;
}

export interface ResolvedRedisPublisherOptions {
  readonly endpoint: RedisEndpoint;
  /** The URL with user and password hidden: the only form that goes into logs and errors. */
  readonly redactedUrl: string;
  /** Not enumerable: console.log and JSON.stringify of the options never show them. */
  readonly username: string | undefined;
  readonly password: string | undefined;
  /** Every form of the password, to scrub from driver messages. Not enumerable. */
  readonly secrets: readonly string[];
  readonly streamPrefix: string;
  readonly maxLen: number | undefined;
  readonly publishTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly waitReplicas: number;
  readonly waitTimeoutMs: number;
  readonly maxMessageBytes: number | undefined;
  readonly clientName: string;
  readonly logger: Logger;
}

/** Redis refuses a bulk string over `proto-max-bulk-len`, 512 MiB by default. */
const MAX_BULK_BYTES = 536_870_912;
const MAX_TIMER_MS = 10 * 60_000;
const NO_CONTROL_CHARACTERS = /^[^\u0000-\u001f\u007f]*$/;
const CLIENT_NAME = /^[!-~]+$/;
const ms = z.number().int().min(1).max(MAX_TIMER_MS);

const settingsSchema = z
  .object({
    streamPrefix: z.string().min(1).max(200).regex(NO_CONTROL_CHARACTERS, 'must not contain control characters').default(''),
    maxLen: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
    publishTimeoutMs: ms.default(10_000),
    connectTimeoutMs: ms.default(10_000),
    waitReplicas: z.number().int().min(0).max(100).default(0),
    waitTimeoutMs: ms.default(1000),
    maxMessageBytes: z.number().int().min(1).max(MAX_BULK_BYTES).optional(),
    clientName: z.string().min(1).max(200).regex(CLIENT_NAME, 'must be printable ASCII without spaces (CLIENT SETNAME refuses spaces)').default('outboxer'),
  })
  .strict();

export const REDIS_PUBLISHER_DEFAULTS = Object.freeze({
  publishTimeoutMs: 10_000,
  connectTimeoutMs: 10_000,
  waitReplicas: 0,
  waitTimeoutMs: 1000,
  clientName: 'outboxer',
});

function invalid(option: string, problem: string, options: readonly string[] = [option]): never {
  throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `redis publisher option ${option}: ${problem}`, { options });
}

function resolveUrl(value: unknown): {
  endpoint: RedisEndpoint;
  redactedUrl: string;
  username: string | undefined;
  password: string | undefined;
  secrets: string[];
} {
  if (typeof value !== 'string' || value === '') invalid('url', 'is required: a redis:// or rediss:// URL such as redis://127.0.0.1:6379');
  const secrets = secretsOfUrl(value);
  const redactedUrl = redactUrl(value);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    invalid('url', 'is not a valid URL (value hidden, it may hold a password); expected redis://[[user]:password@]host[:port][/db]');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') invalid('url', `must start with redis:// or rediss://; got ${redactedUrl}`);
  if (url.hostname === '') invalid('url', `has no host: ${redactedUrl}`);
  if (url.search !== '' || url.hash !== '') invalid('url', `must be redis://[[user]:password@]host[:port][/db], without query or fragment: ${redactedUrl}`);
  const path = url.pathname === '' || url.pathname === '/' ? '0' : url.pathname.slice(1);
  if (!/^\d{1,5}$/.test(path)) invalid('url', `its path must be a database number such as /0; got ${redactedUrl}`);
  let username: string;
  let password: string;
  try {
    username = decodeURIComponent(url.username);
    password = decodeURIComponent(url.password);
  } catch {
    invalid('url', `has malformed percent-encoding in its credentials: ${redactedUrl}`);
  }
  if (username !== '' && password === '')
    invalid('url', `names user "${username}" without a password: write redis://${username}:<password>@host, or only :<password>@ for the default user`);
  const endpoint = Object.freeze({
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port === '' ? 6379 : Number(url.port),
    tls: url.protocol === 'rediss:',
    database: Number(path),
  });
  return { endpoint, redactedUrl, username: username === '' ? undefined : username, password: password === '' ? undefined : password, secrets };
}

function resolveLogger(value: unknown): Logger {
  if (value === undefined) return silentLogger;
  const candidate: Partial<Record<keyof Logger, unknown>> | null = value;
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    !(['debug', 'info', 'warn', 'error'] as const).every((level) => typeof candidate[level] === 'function')
  ) {
    invalid('logger', 'must have debug, info, warn and error methods (pino fits)');
  }
  return value as Logger;
}

/** Resolves the options once: documented defaults, validated, frozen. Invalid → ConfigurationError naming the option and the fix. */
export function resolveRedisPublisherOptions(input: RedisPublisherOptions): ResolvedRedisPublisherOptions {
  if (typeof input !== 'object' || input === null) invalid('(root)', 'an options object with at least url is required', []);
  const { url, logger, ...rest } = input;
  const parsed = settingsSchema.safeParse(rest);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.join('.') ?? '';
    if (issue?.code === 'unrecognized_keys') {
      const known = ['url', 'logger', ...Object.keys(settingsSchema.shape)].join(', ');
      invalid(issue.keys.join(', ').slice(0, 80), `is not an option (known: ${known})`, issue.keys);
    }
    invalid(path || '(root)', issue?.message ?? 'invalid', path === '' ? [] : [path]);
  }
  const settings = parsed.data;
  const { endpoint, redactedUrl, username, password, secrets } = resolveUrl(url);
  if (settings.waitReplicas > 0 && settings.waitTimeoutMs >= settings.publishTimeoutMs) {
    invalid(
      'waitTimeoutMs',
      `(${settings.waitTimeoutMs}) must be below publishTimeoutMs (${settings.publishTimeoutMs}), so that a publish can wait for its replicas and still answer in time; lower waitTimeoutMs or raise publishTimeoutMs`,
      ['waitTimeoutMs', 'publishTimeoutMs'],
    );
  }
  const resolved = { ...settings, maxLen: settings.maxLen, maxMessageBytes: settings.maxMessageBytes, endpoint, redactedUrl, logger: resolveLogger(logger) };
  Object.defineProperty(resolved, 'username', { value: username, enumerable: false });
  Object.defineProperty(resolved, 'password', { value: password, enumerable: false });
  Object.defineProperty(resolved, 'secrets', { value: Object.freeze(secrets), enumerable: false });
  return Object.freeze(resolved as typeof resolved & Pick<ResolvedRedisPublisherOptions, 'username' | 'password' | 'secrets'>);
}
