import { hostname } from 'node:os';
import { ConfigurationError } from '../../core/errors.js';
import { silentLogger } from '../../core/logger.js';
import type { Logger } from '../../core/ports.js';
import { redactUrl } from '../../core/redact.js';
import { type CloudEventsOptions, resolveCloudEventsOption, type ResolvedCloudEvents } from '../cloudevents.js';

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

const KNOWN_OPTIONS = new Set([
  'url',
  'exchange',
  'exchangeType',
  'declareExchange',
  'confirmTimeoutMs',
  'connectTimeoutMs',
  'heartbeatSeconds',
  'maxMessageBytes',
  'logger',
  'clientName',
  'cloudEvents',
]);
const MAX_TIMER_MS = 2_147_483_647;
/** RabbitMQ refuses to configure `max_message_size` above 512 MiB. */
const MAX_MESSAGE_BYTES = 536_870_912;
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;
const PLUGIN_EXCHANGE_TYPE = /^x-[A-Za-z0-9_.-]+$/;
const BUILT_IN_EXCHANGE_TYPES = new Set(['topic', 'direct', 'fanout', 'headers']);

function fail(option: string, problem: string): never {
  throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `rabbitmq publisher option ${option}: ${problem}`);
}

function integer(option: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    fail(option, `must be an integer from ${min} to ${max}; got ${typeof value === 'number' ? value : typeof value}`);
  }
  return value;
}

/** A short AMQP string (exchange, connection name): non-empty, at most 255 bytes, no control characters. */
function shortString(option: string, value: unknown, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || value === '') fail(option, 'must be a non-empty string');
  if (Buffer.byteLength(value) > 255) fail(option, `must be at most 255 bytes; got ${Buffer.byteLength(value)}`);
  if (CONTROL_CHARS.test(value)) fail(option, 'must not contain control characters');
  return value;
}

function resolveUrl(value: unknown, heartbeatOption: unknown): { url: string; redactedUrl: string; heartbeatSeconds: number } {
  if (typeof value !== 'string' || value === '') fail('url', 'is required: an amqp:// or amqps:// URL');
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    fail('url', 'is not a valid URL (value hidden, it may hold a password)');
  }
  const redactedUrl = redactUrl(value);
  if (parsed.protocol !== 'amqp:' && parsed.protocol !== 'amqps:') fail('url', `must start with amqp:// or amqps://; got ${redactedUrl}`);
  if (parsed.hostname === '') fail('url', `has no host: ${redactedUrl}`);
  const fromUrl = parsed.searchParams.get('heartbeat');
  let heartbeatSeconds: number;
  if (heartbeatOption !== undefined || fromUrl === null) {
    heartbeatSeconds = integer('heartbeatSeconds', heartbeatOption, RABBITMQ_PUBLISHER_DEFAULTS.heartbeatSeconds, 0, 65_535);
    parsed.searchParams.set('heartbeat', String(heartbeatSeconds));
  } else {
    if (!/^\d{1,5}$/.test(fromUrl) || Number(fromUrl) > 65_535)
      fail('url', `query parameter heartbeat must be an integer from 0 to 65535; got ${JSON.stringify(fromUrl.slice(0, 20))}`);
    heartbeatSeconds = Number(fromUrl);
  }
  return { url: parsed.toString(), redactedUrl, heartbeatSeconds };
}

function resolveExchangeType(value: unknown): RabbitMqExchangeType {
  if (value === undefined) return RABBITMQ_PUBLISHER_DEFAULTS.exchangeType;
  if (typeof value !== 'string' || !(BUILT_IN_EXCHANGE_TYPES.has(value) || PLUGIN_EXCHANGE_TYPE.test(value))) {
    fail('exchangeType', `must be topic, direct, fanout, headers or a plugin type x-...; got ${JSON.stringify(String(value).slice(0, 40))}`);
  }
  return value as RabbitMqExchangeType;
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

/** Resolves the publisher's options once: documented defaults, validated, frozen. Throws ConfigurationError. */
export function resolveRabbitMqPublisherOptions(input: RabbitMqPublisherOptions): ResolvedRabbitMqPublisherOptions {
  if (typeof input !== 'object' || input === null) fail('(root)', 'options must be an object with at least url');
  for (const name of Object.keys(input)) {
    if (!KNOWN_OPTIONS.has(name)) fail(name, `is not a known option (known: ${[...KNOWN_OPTIONS].join(', ')})`);
  }
  const { url, redactedUrl, heartbeatSeconds } = resolveUrl(input.url, input.heartbeatSeconds);
  if (input.declareExchange !== undefined && typeof input.declareExchange !== 'boolean') fail('declareExchange', 'must be a boolean');
  const resolved = {
    redactedUrl,
    exchange: shortString('exchange', input.exchange, RABBITMQ_PUBLISHER_DEFAULTS.exchange),
    exchangeType: resolveExchangeType(input.exchangeType),
    declareExchange: input.declareExchange ?? RABBITMQ_PUBLISHER_DEFAULTS.declareExchange,
    confirmTimeoutMs: integer('confirmTimeoutMs', input.confirmTimeoutMs, RABBITMQ_PUBLISHER_DEFAULTS.confirmTimeoutMs, 1, MAX_TIMER_MS),
    connectTimeoutMs: integer('connectTimeoutMs', input.connectTimeoutMs, RABBITMQ_PUBLISHER_DEFAULTS.connectTimeoutMs, 1, MAX_TIMER_MS),
    heartbeatSeconds,
    maxMessageBytes: input.maxMessageBytes === undefined ? undefined : integer('maxMessageBytes', input.maxMessageBytes, 0, 1, MAX_MESSAGE_BYTES),
    logger: resolveLogger(input.logger),
    clientName: shortString('clientName', input.clientName, `outboxer@${hostname()}/${process.pid}`),
    cloudEvents: resolveCloudEventsOption(input.cloudEvents, 'rabbitmq'),
  };
  Object.defineProperty(resolved, 'url', { value: url, enumerable: false });
  return Object.freeze(resolved) as ResolvedRabbitMqPublisherOptions;
}
