import { hostname } from 'node:os';
import { z } from 'zod';
import { ConfigurationError } from '../../core/errors.js';
import { silentLogger } from '../../core/logger.js';
import { isLoggerLike, parseOptions, wholeNumber } from '../../core/parse-options.js';
import type { Logger } from '../../core/ports.js';
import { redactUrl } from '../../core/redact.js';
import { type CloudEventsOptions, cloudEventsOptionSchema, type ResolvedCloudEvents } from '../cloudevents.js';

/** The built-in exchange types, or a plugin type (`x-delayed-message`, `x-consistent-hash`, ...). */
export type RabbitMqExchangeType = 'topic' | 'direct' | 'fanout' | 'headers' | `x-${string}`;

export interface RabbitMqPublisherOptions {
  /** `amqp://user:password@host:5672/vhost` or `amqps://...`. Required. Never logged or echoed unredacted. */
  readonly url: string;
  /** Exchange every message is published to; the routing key is the message topic. Default `outbox`. */
  readonly exchange?: string | undefined;
  /** Type used when declaring the exchange. Default `topic`. */
  readonly exchangeType?: RabbitMqExchangeType | undefined;
  /** Declare the exchange (durable) on every new channel, creating it if missing. Default true. */
  readonly declareExchange?: boolean | undefined;
  /** Longest a publish may take, from the call to the broker's confirm (connecting and backpressure included). Default 10000. */
  readonly confirmTimeoutMs?: number | undefined;
  /** Longest a connection attempt (TCP, AMQP handshake, channel, exchange declaration) may take. Default 10000. */
  readonly connectTimeoutMs?: number | undefined;
  /** AMQP heartbeat, so a silently dead connection is noticed; 0 disables it. Default 10 (or `?heartbeat=` of the URL). */
  readonly heartbeatSeconds?: number | undefined;
  /** Largest body to send; larger messages fail permanently without a round trip. Default: none (the broker decides). */
  readonly maxMessageBytes?: number | undefined;
  /** pino-compatible logger. Default: silent. */
  readonly logger?: Logger | undefined;
  /** Connection name shown by the management UI and `rabbitmqctl list_connections`. Default `outboxer@<host>/<pid>`. */
  readonly clientName?: string | undefined;
  /** Also publish as CloudEvents in binary content mode (`cloudEvents_*` headers, docs/publishers/rabbitmq.md). Default: off. */
  readonly cloudEvents?: CloudEventsOptions | undefined;
}

export interface ResolvedRabbitMqPublisherOptions {
  /** The URL the driver uses (heartbeat applied). Not enumerable: console.log and JSON.stringify never show it. */
  readonly url: string;
  /** The URL with user name and password hidden: the only form that goes into logs and errors. */
  readonly redactedUrl: string;
  readonly exchange: string;
  readonly exchangeType: RabbitMqExchangeType;
  readonly declareExchange: boolean;
  readonly confirmTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly heartbeatSeconds: number;
  readonly maxMessageBytes: number | undefined;
  readonly logger: Logger;
  readonly clientName: string;
  readonly cloudEvents: ResolvedCloudEvents | undefined;
}

export const RABBITMQ_PUBLISHER_DEFAULTS = Object.freeze({
  exchange: 'outbox',
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- widens on purpose: Object.freeze would type the default as the literal 'topic'
  exchangeType: 'topic' as RabbitMqExchangeType,
  declareExchange: true,
  confirmTimeoutMs: 10_000,
  connectTimeoutMs: 10_000,
  heartbeatSeconds: 10,
});

const MAX_TIMER_MS = 2_147_483_647;
/** RabbitMQ refuses to configure `max_message_size` above 512 MiB. */
const MAX_MESSAGE_BYTES = 536_870_912;
const PLUGIN_EXCHANGE_TYPE = /^x-[A-Za-z0-9_.-]+$/;
const BUILT_IN_EXCHANGE_TYPES = new Set(['topic', 'direct', 'fanout', 'headers']);

/** A short AMQP string (exchange, queue, connection name): non-empty, at most 255 bytes, no control characters. */
function amqpShortString(): z.ZodString {
  return z
    .string({ error: 'must be a non-empty string' })
    .min(1, { error: 'must be a non-empty string' })
    .refine((value) => Buffer.byteLength(value) <= 255, { error: 'must be at most 255 bytes' })
    .regex(/^[^\u0000-\u001f\u007f]*$/, { error: 'must not contain control characters' });
}

/** Every option but `url` (parsed apart, so its password never reaches a message). */
const settingsSchema = z
  .object({
    exchange: amqpShortString().default(RABBITMQ_PUBLISHER_DEFAULTS.exchange),
    exchangeType: z
      .custom<RabbitMqExchangeType>((value) => typeof value === 'string' && (BUILT_IN_EXCHANGE_TYPES.has(value) || PLUGIN_EXCHANGE_TYPE.test(value)), {
        error: 'must be topic, direct, fanout, headers or a plugin type x-...',
      })
      .default(RABBITMQ_PUBLISHER_DEFAULTS.exchangeType),
    declareExchange: z.boolean({ error: 'must be a boolean' }).default(RABBITMQ_PUBLISHER_DEFAULTS.declareExchange),
    confirmTimeoutMs: wholeNumber(1, MAX_TIMER_MS, 'milliseconds').default(RABBITMQ_PUBLISHER_DEFAULTS.confirmTimeoutMs),
    connectTimeoutMs: wholeNumber(1, MAX_TIMER_MS, 'milliseconds').default(RABBITMQ_PUBLISHER_DEFAULTS.connectTimeoutMs),
    heartbeatSeconds: wholeNumber(0, 65_535, 'seconds').optional(),
    maxMessageBytes: wholeNumber(1, MAX_MESSAGE_BYTES, 'bytes').optional(),
    logger: z.custom<Logger>((value) => isLoggerLike(value), { error: 'must have debug, info, warn and error methods (pino fits)' }).default(silentLogger),
    clientName: amqpShortString().default(() => `outboxer@${hostname()}/${process.pid}`),
    cloudEvents: cloudEventsOptionSchema.optional(),
  })
  .strict();

function fail(option: string, problem: string): never {
  throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `rabbitmq publisher option ${option}: ${problem}`, { options: [option] });
}

/** The heartbeat is the option's, else the URL's `?heartbeat=`, else 10; the driver's URL carries the one in force. */
function resolveUrl(value: unknown, heartbeatOption: number | undefined): { url: string; redactedUrl: string; heartbeatSeconds: number } {
  if (typeof value !== 'string' || value === '') fail('url', 'is required: an amqp:// or amqps:// URL such as amqp://user:password@127.0.0.1:5672');
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    fail('url', 'is not a valid URL (value hidden, it may hold a password); expected amqp://user:password@host:5672/vhost');
  }
  const redactedUrl = redactUrl(value);
  if (parsed.protocol !== 'amqp:' && parsed.protocol !== 'amqps:') fail('url', `must start with amqp:// or amqps://; got ${redactedUrl}`);
  if (parsed.hostname === '') fail('url', `has no host: ${redactedUrl}`);
  const fromUrl = parsed.searchParams.get('heartbeat');
  let heartbeatSeconds: number;
  if (heartbeatOption !== undefined || fromUrl === null) {
    heartbeatSeconds = heartbeatOption ?? RABBITMQ_PUBLISHER_DEFAULTS.heartbeatSeconds;
    parsed.searchParams.set('heartbeat', String(heartbeatSeconds));
  } else {
    if (!/^\d{1,5}$/.test(fromUrl) || Number(fromUrl) > 65_535)
      fail(
        'url',
        `query parameter heartbeat must be an integer from 0 to 65535 (or set heartbeatSeconds instead); got ${JSON.stringify(fromUrl.slice(0, 20))}`,
      );
    heartbeatSeconds = Number(fromUrl);
  }
  return { url: parsed.toString(), redactedUrl, heartbeatSeconds };
}

/** Resolves the publisher's options once: documented defaults, validated, frozen. Invalid → ConfigurationError naming the option and the fix. */
export function resolveRabbitMqPublisherOptions(input: RabbitMqPublisherOptions): ResolvedRabbitMqPublisherOptions {
  if (typeof input !== 'object' || input === null) fail('(root)', 'options must be an object with at least url');
  const { url: rawUrl, ...rest } = input;
  const settings = parseOptions(settingsSchema, rest, 'rabbitmq publisher', { alsoKnown: ['url'] });
  const { url, redactedUrl, heartbeatSeconds } = resolveUrl(rawUrl, settings.heartbeatSeconds);
  const resolved = {
    ...settings,
    redactedUrl,
    heartbeatSeconds,
    maxMessageBytes: settings.maxMessageBytes,
    cloudEvents: settings.cloudEvents,
  };
  Object.defineProperty(resolved, 'url', { value: url, enumerable: false });
  return Object.freeze(resolved) as ResolvedRabbitMqPublisherOptions;
}
