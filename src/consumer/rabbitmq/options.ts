import { hostname } from 'node:os';
import { ConfigurationError } from '../../core/errors.js';
import type { Logger } from '../../core/ports.js';
import { resolveRabbitMqPublisherOptions, type RabbitMqExchangeType } from '../../publishers/rabbitmq/options.js';
import type { DeliveryInstrumentation } from '../delivery-instrumentation.js';
import type { ConsumerHooks } from '../delivery-runner.js';
import type { Inbox } from '../inbox.js';
import type { MessageHandler } from '../message-registry.js';

export interface RabbitMqConsumerOptions<Tx> {
  /** `amqp://user:password@host:5672/vhost`. Required. Only its redacted form is ever logged. */
  readonly url: string;
  /** Durable queue to consume, declared (durable) if missing and bound to the exchange. Required. */
  readonly queue: string;
  /** The inbox that makes handling effectively once. Required. */
  readonly inbox: Inbox<Tx>;
  /** Handles every message; default: the inbox registry's handler for the message type. */
  readonly handler?: MessageHandler<Tx> | undefined;
  /** The outbox exchange the relay publishes to. Default `outbox`. */
  readonly exchange?: string | undefined;
  /** Type used when declaring the exchange. Default `topic`. */
  readonly exchangeType?: RabbitMqExchangeType | undefined;
  /** Declare the exchange (durable) if missing. Default true. */
  readonly declareExchange?: boolean | undefined;
  /** Routing-key patterns the queue is bound with (topics: `orders.#`). Default `['#']`. */
  readonly bindingKeys?: readonly string[] | undefined;
  /** Unacked deliveries at once (basic.qos). Default 16. */
  readonly prefetch?: number | undefined;
  /** Extra queue arguments at declaration (`x-dead-letter-exchange`, `x-queue-type`, ...). Default none. */
  readonly queueArguments?: Readonly<Record<string, string | number | boolean>> | undefined;
  /** Declare the queue with `x-single-active-consumer`: one instance consumes at a time (keeps key order across instances). Default false. */
  readonly singleActiveConsumer?: boolean | undefined;
  /** A dead message: `reject` (nack without requeue: to the queue's dead-letter exchange, if any) or `ack`. Default `reject`. */
  readonly deadLetter?: 'reject' | 'ack' | undefined;
  /** AMQP heartbeat in seconds. Default 10. */
  readonly heartbeatSeconds?: number | undefined;
  /** Bound on one connection attempt. Default 10000. */
  readonly connectTimeoutMs?: number | undefined;
  /** First pause before reconnecting after a loss (doubling, jittered). Default 1000. */
  readonly reconnectDelayMs?: number | undefined;
  /** Longest pause between reconnect attempts. Default 30000. */
  readonly maxReconnectDelayMs?: number | undefined;
  /** How long `stop()` waits for handlers in flight before closing anyway. Default 30000. */
  readonly stopTimeoutMs?: number | undefined;
  /** Connection name shown by the management UI. Default `outboxer-consumer@<host>/<pid>`. */
  readonly clientName?: string | undefined;
  readonly logger?: Logger | undefined;
  readonly hooks?: ConsumerHooks | undefined;
  /** Observes each handling attempt, e.g. `createOtelInstrumentation(...).delivery` from `outboxer/otel`. Default none. */
  readonly instrumentation?: DeliveryInstrumentation | undefined;
}

export interface ResolvedRabbitMqConsumerOptions<Tx> {
  /** Not enumerable: never printed by console.log or JSON.stringify. */
  readonly url: string;
  readonly redactedUrl: string;
  readonly queue: string;
  readonly inbox: Inbox<Tx>;
  readonly handler: MessageHandler<Tx> | undefined;
  readonly exchange: string;
  readonly exchangeType: RabbitMqExchangeType;
  readonly declareExchange: boolean;
  readonly bindingKeys: readonly string[];
  readonly prefetch: number;
  readonly queueArguments: Readonly<Record<string, string | number | boolean>>;
  readonly deadLetter: 'reject' | 'ack';
  readonly connectTimeoutMs: number;
  readonly reconnectDelayMs: number;
  readonly maxReconnectDelayMs: number;
  readonly stopTimeoutMs: number;
  readonly clientName: string;
  readonly logger: Logger;
  readonly hooks: ConsumerHooks;
  readonly instrumentation: DeliveryInstrumentation | undefined;
}

export const RABBITMQ_CONSUMER_DEFAULTS = Object.freeze({
  bindingKeys: Object.freeze(['#']),
  prefetch: 16,
  deadLetter: 'reject' as const,
  reconnectDelayMs: 1000,
  maxReconnectDelayMs: 30_000,
  stopTimeoutMs: 30_000,
});

const KNOWN = new Set([
  'url',
  'queue',
  'inbox',
  'handler',
  'exchange',
  'exchangeType',
  'declareExchange',
  'bindingKeys',
  'prefetch',
  'queueArguments',
  'singleActiveConsumer',
  'deadLetter',
  'heartbeatSeconds',
  'connectTimeoutMs',
  'reconnectDelayMs',
  'maxReconnectDelayMs',
  'stopTimeoutMs',
  'clientName',
  'logger',
  'hooks',
  'instrumentation',
]);
const SHORT_STRING = /^[^\u0000-\u001f\u007f]{1,255}$/;

function fail(option: string, problem: string): never {
  throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `rabbitmq consumer option ${option}: ${problem}`);
}

function int(option: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) fail(option, `must be an integer from ${min} to ${max}`);
  return value;
}

/** Resolves the consumer's options once: documented defaults, validated, frozen. Throws ConfigurationError. */
export function resolveRabbitMqConsumerOptions<Tx>(input: RabbitMqConsumerOptions<Tx>): ResolvedRabbitMqConsumerOptions<Tx> {
  if (typeof input !== 'object' || input === null) fail('(root)', 'options must be an object');
  for (const name of Object.keys(input)) if (!KNOWN.has(name)) fail(name.slice(0, 60), `is not a known option (known: ${[...KNOWN].join(', ')})`);
  let shared;
  try {
    shared = resolveRabbitMqPublisherOptions({
      url: input.url,
      exchange: input.exchange,
      exchangeType: input.exchangeType,
      declareExchange: input.declareExchange,
      heartbeatSeconds: input.heartbeatSeconds,
      connectTimeoutMs: input.connectTimeoutMs,
      logger: input.logger,
      clientName: input.clientName ?? `outboxer-consumer@${hostname()}/${process.pid}`,
    });
  } catch (error) {
    if (error instanceof ConfigurationError)
      throw new ConfigurationError(error.code, error.message.replace('rabbitmq publisher option', 'rabbitmq consumer option'));
    throw error;
  }
  if (typeof input.queue !== 'string' || !SHORT_STRING.test(input.queue) || Buffer.byteLength(input.queue) > 255 || input.queue.startsWith('amq.')) {
    fail('queue', 'is required: 1 to 255 bytes, no control characters, not starting with "amq."');
  }
  if (typeof input.inbox !== 'object' || input.inbox === null || typeof input.inbox.handleDelivery !== 'function') fail('inbox', 'is required: an Inbox');
  if (input.handler !== undefined && typeof input.handler !== 'function') fail('handler', 'must be a function (message, tx) => Promise<void>');
  if (input.instrumentation !== undefined && typeof (input.instrumentation as Partial<DeliveryInstrumentation> | null)?.process !== 'function') {
    fail('instrumentation', 'must have a process(attempt, handle) method (e.g. createOtelInstrumentation(...).delivery from outboxer/otel)');
  }
  const bindingKeys = input.bindingKeys ?? RABBITMQ_CONSUMER_DEFAULTS.bindingKeys;
  if (!Array.isArray(bindingKeys) || bindingKeys.some((key) => typeof key !== 'string' || Buffer.byteLength(key) > 255 || /[\u0000-\u001f]/.test(key))) {
    fail('bindingKeys', 'must be an array of routing-key patterns of at most 255 bytes');
  }
  const deadLetter = input.deadLetter ?? RABBITMQ_CONSUMER_DEFAULTS.deadLetter;
  if (deadLetter !== 'reject' && deadLetter !== 'ack') fail('deadLetter', "must be 'reject' or 'ack'");
  const queueArguments = { ...(input.queueArguments ?? {}) };
  if (input.singleActiveConsumer !== undefined && typeof input.singleActiveConsumer !== 'boolean') fail('singleActiveConsumer', 'must be a boolean');
  if (input.singleActiveConsumer === true) queueArguments['x-single-active-consumer'] = true;
  const reconnectDelayMs = int('reconnectDelayMs', input.reconnectDelayMs, RABBITMQ_CONSUMER_DEFAULTS.reconnectDelayMs, 1, 3_600_000);
  const resolved = {
    redactedUrl: shared.redactedUrl,
    queue: input.queue,
    inbox: input.inbox,
    handler: input.handler,
    exchange: shared.exchange,
    exchangeType: shared.exchangeType,
    declareExchange: shared.declareExchange,
    bindingKeys: Object.freeze([...(bindingKeys as string[])]),
    prefetch: int('prefetch', input.prefetch, RABBITMQ_CONSUMER_DEFAULTS.prefetch, 1, 65_535),
    queueArguments: Object.freeze(queueArguments),
    deadLetter,
    connectTimeoutMs: shared.connectTimeoutMs,
    reconnectDelayMs,
    maxReconnectDelayMs: int(
      'maxReconnectDelayMs',
      input.maxReconnectDelayMs,
      Math.max(reconnectDelayMs, RABBITMQ_CONSUMER_DEFAULTS.maxReconnectDelayMs),
      reconnectDelayMs,
      3_600_000,
    ),
    stopTimeoutMs: int('stopTimeoutMs', input.stopTimeoutMs, RABBITMQ_CONSUMER_DEFAULTS.stopTimeoutMs, 1, 3_600_000),
    clientName: shared.clientName,
    logger: shared.logger,
    hooks: Object.freeze({ ...input.hooks }),
    instrumentation: input.instrumentation,
  };
  Object.defineProperty(resolved, 'url', { value: shared.url, enumerable: false });
  return Object.freeze(resolved) as ResolvedRabbitMqConsumerOptions<Tx>;
}
