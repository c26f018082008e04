import { hostname } from 'node:os';
import { z } from 'zod';
import { ConfigurationError } from '../../core/errors.js';
import { silentLogger } from '../../core/logger.js';
import type { Logger } from '../../core/ports.js';
import { redactUrl, secretsOfUrl } from '../../core/redact.js';

/** The placeholder of `address` that the message topic replaces. */
export const TOPIC_PLACEHOLDER = '{topic}';

const MAX_TIMER_MS = 2_147_483_647;
const NO_CONTROL_CHARS = /^[^\u0000-\u001f\u007f]*$/;

const amqp10OptionsSchema = z
  .object({
    url: z.string({ error: 'is required: amqp://user:password@host:5672 or amqps://...' }).min(1, 'is required: amqp://user:password@host:5672 or amqps://...'),
    /**
     * The target address of a topic's messages: a template in which `{topic}` stands for the topic. Default `{topic}`
     * (a Service Bus queue or topic, an Artemis address, a Qpid node of that name); on RabbitMQ 3.10 use
     * `/exchange/<exchange>/{topic}` (the topic becomes the routing key).
     */
    address: z
      .string()
      .regex(NO_CONTROL_CHARS, 'must not contain control characters')
      .refine(
        (value) => value.split(TOPIC_PLACEHOLDER).length === 2,
        `must contain ${TOPIC_PLACEHOLDER} exactly once, e.g. /exchange/outbox/${TOPIC_PLACEHOLDER} or ${TOPIC_PLACEHOLDER}`,
      )
      .default(TOPIC_PLACEHOLDER),
    /** Longest a publish may take, from the call to the Accepted disposition (connecting, attaching and waiting for credit included). Default 10000. */
    publishTimeoutMs: z.number().int().min(1).max(MAX_TIMER_MS).default(10_000),
    /** Longest a connection attempt (TCP, TLS, SASL, open) may take. Default 10000. */
    connectTimeoutMs: z.number().int().min(1).max(MAX_TIMER_MS).default(10_000),
    /** AMQP idle time-out we announce: the peer must send something this often, or the connection is dropped. 0 disables it. Default 30000. */
    idleTimeoutMs: z.number().int().min(0).max(MAX_TIMER_MS).default(30_000),
    /** Sender links kept open at most (one per target address); the least recently used idle one is detached beyond it. Default 64. */
    maxSenders: z.number().int().min(1).max(1000).default(64),
    /** Largest body to send; larger ones fail permanently without a round trip. Default: none (the link's max-message-size, if the broker announces one). */
    maxMessageBytes: z.number().int().min(1).optional(),
    /** The AMQP container id of this publisher (shown by the broker). Default `outboxer@<host>/<pid>`. */
    containerId: z.string().min(1).max(255).regex(NO_CONTROL_CHARS, 'must not contain control characters').optional(),
  })
  .strict();

export type Amqp10PublisherOptions = z.input<typeof amqp10OptionsSchema> & {
  /** pino-compatible logger. Default: silent. */
  readonly logger?: Logger | undefined;
};

export interface ResolvedAmqp10PublisherOptions {
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
  /** The URL's path: a RabbitMQ virtual host, sent as `vhost:<name>` in the open frame's hostname. */
  readonly vhost: string | undefined;
  /** From the URL; not enumerable, so that console.log and JSON.stringify never show them. */
  readonly username: string | undefined;
  readonly password: string | undefined;
  /** Every form of the password, to scrub from driver messages. Not enumerable. */
  readonly secrets: readonly string[];
  /** The URL with user name and password hidden: the only form that goes into logs and errors. */
  readonly redactedUrl: string;
  readonly address: string;
  readonly publishTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly maxSenders: number;
  readonly maxMessageBytes: number | undefined;
  readonly containerId: string;
  readonly logger: Logger;
}

export const AMQP10_PUBLISHER_DEFAULTS = Object.freeze({
  address: TOPIC_PLACEHOLDER,
  publishTimeoutMs: 10_000,
  connectTimeoutMs: 10_000,
  idleTimeoutMs: 30_000,
  maxSenders: 64,
});

function fail(option: string, problem: string): never {
  throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `amqp10 publisher option ${option}: ${problem}`, { options: option === '(root)' ? [] : [option] });
}

function decoded(option: string, value: string, shown: string): string | undefined {
  if (value === '') return undefined;
  try {
    return decodeURIComponent(value);
  } catch {
    fail(option, `${shown} has malformed percent-encoding in its credentials (encode them with encodeURIComponent)`);
  }
}

function resolveUrl(raw: string) {
  const redactedUrl = redactUrl(raw);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    fail('url', 'is not a valid URL (value hidden, it may hold a password); percent-encode a password holding / + = @ : #');
  }
  if (url.protocol !== 'amqp:' && url.protocol !== 'amqps:') fail('url', `must start with amqp:// or amqps://; got ${redactedUrl}`);
  if (url.hostname === '') fail('url', `has no host: ${redactedUrl}`);
  if (url.search !== '' || url.hash !== '' || url.pathname.slice(1).includes('/')) {
    fail('url', `must be amqp[s]://[user:password@]host[:port][/vhost] with no query or fragment; got ${redactedUrl}`);
  }
  const tls = url.protocol === 'amqps:';
  let vhost: string | undefined;
  try {
    vhost = url.pathname.length > 1 ? decodeURIComponent(url.pathname.slice(1)) : undefined;
  } catch {
    fail('url', `has malformed percent-encoding in its path: ${redactedUrl}`);
  }
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port === '' ? (tls ? 5671 : 5672) : Number(url.port),
    tls,
    username: decoded('url', url.username, redactedUrl),
    password: decoded('url', url.password, redactedUrl),
    secrets: secretsOfUrl(raw),
    redactedUrl,
    vhost,
  };
}

function resolveLogger(value: unknown): Logger {
  if (value === undefined) return silentLogger;
  const candidate: Partial<Record<keyof Logger, unknown>> | null = value;
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    !(['debug', 'info', 'warn', 'error'] as const).every((level) => typeof candidate[level] === 'function')
  ) {
    fail('logger', 'must have debug, info, warn and error methods (pino fits)');
  }
  return value as Logger;
}

/** Resolves the options once: documented defaults, validated, frozen. Throws a ConfigurationError naming the option. */
export function resolveAmqp10PublisherOptions(input: Amqp10PublisherOptions): ResolvedAmqp10PublisherOptions {
  if (typeof input !== 'object' || input === null) fail('(root)', 'options must be an object with at least url');
  const { logger, ...rest } = input;
  const parsed = amqp10OptionsSchema.safeParse(rest);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const unknown = issue?.code === 'unrecognized_keys' ? issue.keys.join(', ') : undefined;
    if (unknown !== undefined) fail(unknown.slice(0, 80), `is not an option (known: ${Object.keys(amqp10OptionsSchema.shape).join(', ')}, logger)`);
    // a bad url is never echoed: it may hold a password
    fail(issue?.path.join('.') || '(root)', issue?.message ?? 'is invalid');
  }
  const options = parsed.data;
  const { username, password, secrets, ...where } = resolveUrl(options.url);
  if (password !== undefined && username === undefined) fail('url', `has a password but no user name: ${where.redactedUrl}`);
  const resolved = {
    ...where,
    address: options.address,
    publishTimeoutMs: options.publishTimeoutMs,
    connectTimeoutMs: options.connectTimeoutMs,
    idleTimeoutMs: options.idleTimeoutMs,
    maxSenders: options.maxSenders,
    maxMessageBytes: options.maxMessageBytes,
    containerId: options.containerId ?? `outboxer@${hostname()}/${process.pid}`,
    logger: resolveLogger(logger),
  };
  Object.defineProperty(resolved, 'username', { value: username, enumerable: false });
  Object.defineProperty(resolved, 'password', { value: password, enumerable: false });
  Object.defineProperty(resolved, 'secrets', { value: Object.freeze(secrets), enumerable: false });
  return Object.freeze(resolved) as ResolvedAmqp10PublisherOptions;
}
