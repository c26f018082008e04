import { hostname } from 'node:os';
import { z } from 'zod';
import { ConfigurationError } from '../../../core/errors.js';
import { parseOptions, wholeNumber } from '../../../core/parse-options.js';
import type { Logger } from '../../../core/ports.js';
import { resolveRabbitMqPublisherOptions, type RabbitMqExchangeType, type ResolvedRabbitMqPublisherOptions } from '../options.js';
import {
  type Batching,
  brokerConsumerShape,
  connectionByPublisherRules,
  DEFAULT_STOP_TIMEOUT_MS,
  resolveBatching,
} from '../../../consumer/broker-consumer-options.js';
import type { DeliveryInstrumentation } from '../../../consumer/delivery-instrumentation.js';
import type { ConsumerHooks } from '../../../consumer/delivery-runner.js';
import type { Inbox } from '../../../consumer/inbox.js';
import type { MessageHandler } from '../../../consumer/message-registry.js';

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
  /** pino-compatible logger. Default: silent. */
  readonly logger?: Logger | undefined;
  /** Observers of each delivery's outcome. Default none. */
  readonly hooks?: ConsumerHooks | undefined;
  /** Observes each handling attempt, e.g. `createOtelInstrumentation(...).delivery` from `outboxer/otel`. Default none. */
  readonly instrumentation?: DeliveryInstrumentation | undefined;
  /** Deliveries handled in one inbox transaction at most; 1: each in its own. Default half of `prefetch` (at most 64); 1 with `instrumentation`. */
  readonly maxBatch?: number | undefined;
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
  readonly batching: Batching;
}

export const RABBITMQ_CONSUMER_DEFAULTS = Object.freeze({
  bindingKeys: Object.freeze(['#']),
  prefetch: 16,
  deadLetter: 'reject' as const,
  reconnectDelayMs: 1000,
  maxReconnectDelayMs: 30_000,
  stopTimeoutMs: DEFAULT_STOP_TIMEOUT_MS,
});

const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;
const BINDING_KEYS_RULE = 'must be an array of routing-key patterns of at most 255 bytes, without control characters';
const QUEUE_RULE = 'is required: 1 to 255 bytes, no control characters, not starting with "amq."';

/** Every option but the connection's (the publisher's rules: `url`, exchange, heartbeat, ...) and `hooks`. */
const consumerSchema = z
  .object({
    queue: z
      .string({ error: QUEUE_RULE })
      .refine((queue) => queue !== '' && Buffer.byteLength(queue) <= 255 && !queue.startsWith('amq.') && !CONTROL_CHARACTERS.test(queue), {
        error: QUEUE_RULE,
      }),
    ...brokerConsumerShape,
    bindingKeys: z
      .array(
        z.string({ error: BINDING_KEYS_RULE }).refine((key) => Buffer.byteLength(key) <= 255 && !/[\u0000-\u001f]/.test(key), { error: BINDING_KEYS_RULE }),
        { error: BINDING_KEYS_RULE },
      )
      .readonly()
      .default(RABBITMQ_CONSUMER_DEFAULTS.bindingKeys),
    prefetch: wholeNumber(1, 65_535).default(RABBITMQ_CONSUMER_DEFAULTS.prefetch),
    queueArguments: z
      .custom<Readonly<Record<string, string | number | boolean>>>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), {
        error: "must be an object of queue arguments, e.g. { 'x-queue-type': 'quorum' }",
      })
      .optional(),
    singleActiveConsumer: z.boolean({ error: 'must be a boolean' }).optional(),
    deadLetter: z.enum(['reject', 'ack'], { error: "must be 'reject' or 'ack'" }).default(RABBITMQ_CONSUMER_DEFAULTS.deadLetter),
    reconnectDelayMs: wholeNumber(1, 3_600_000, 'milliseconds').default(RABBITMQ_CONSUMER_DEFAULTS.reconnectDelayMs),
    maxReconnectDelayMs: wholeNumber(1, 3_600_000, 'milliseconds').optional(),
  })
  .strict();

const CONNECTION_OPTIONS = ['url', 'exchange', 'exchangeType', 'declareExchange', 'heartbeatSeconds', 'connectTimeoutMs', 'clientName', 'logger'] as const;

function fail(option: string, problem: string, options: readonly string[] = [option]): never {
  throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `rabbitmq consumer option ${option}: ${problem}`, { options });
}

/** The connection is resolved by the publisher's rules; its faults are named as this consumer's options. */
function resolveConnection<Tx>(input: RabbitMqConsumerOptions<Tx>): ResolvedRabbitMqPublisherOptions {
  return connectionByPublisherRules('rabbitmq', () =>
    resolveRabbitMqPublisherOptions({
      url: input.url,
      exchange: input.exchange,
      exchangeType: input.exchangeType,
      declareExchange: input.declareExchange,
      heartbeatSeconds: input.heartbeatSeconds,
      connectTimeoutMs: input.connectTimeoutMs,
      logger: input.logger,
      clientName: input.clientName ?? `outboxer-consumer@${hostname()}/${process.pid}`,
    }),
  );
}

/** Resolves the consumer's options once: documented defaults, validated, frozen. Invalid → ConfigurationError naming the option and the fix. */
export function resolveRabbitMqConsumerOptions<Tx>(input: RabbitMqConsumerOptions<Tx>): ResolvedRabbitMqConsumerOptions<Tx> {
  if (typeof input !== 'object' || input === null) fail('(root)', 'options must be an object with url, queue and inbox', []);
  const shared = resolveConnection(input);
  const { hooks, ...rest } = input;
  for (const name of CONNECTION_OPTIONS) delete (rest as Partial<RabbitMqConsumerOptions<Tx>>)[name];
  const options = parseOptions(consumerSchema, rest, 'rabbitmq consumer', { alsoKnown: [...CONNECTION_OPTIONS, 'hooks'] });
  const maxReconnectDelayMs = options.maxReconnectDelayMs ?? Math.max(options.reconnectDelayMs, RABBITMQ_CONSUMER_DEFAULTS.maxReconnectDelayMs);
  if (maxReconnectDelayMs < options.reconnectDelayMs) {
    fail(
      'maxReconnectDelayMs',
      `(${maxReconnectDelayMs}) must be >= reconnectDelayMs (${options.reconnectDelayMs}); raise maxReconnectDelayMs or lower reconnectDelayMs`,
      ['maxReconnectDelayMs', 'reconnectDelayMs'],
    );
  }
  const queueArguments: Record<string, string | number | boolean> = { ...options.queueArguments };
  if (options.singleActiveConsumer === true) queueArguments['x-single-active-consumer'] = true;
  const resolved = {
    redactedUrl: shared.redactedUrl,
    queue: options.queue,
    inbox: options.inbox as Inbox<Tx>,
    handler: options.handler as MessageHandler<Tx> | undefined,
    exchange: shared.exchange,
    exchangeType: shared.exchangeType,
    declareExchange: shared.declareExchange,
    bindingKeys: Object.freeze([...options.bindingKeys]),
    prefetch: options.prefetch,
    queueArguments: Object.freeze(queueArguments),
    deadLetter: options.deadLetter,
    connectTimeoutMs: shared.connectTimeoutMs,
    reconnectDelayMs: options.reconnectDelayMs,
    maxReconnectDelayMs,
    stopTimeoutMs: options.stopTimeoutMs,
    clientName: shared.clientName,
    logger: shared.logger,
    hooks: Object.freeze({ ...hooks }),
    instrumentation: options.instrumentation,
    batching: resolveBatching('rabbitmq', options.maxBatch, options.prefetch, options.inbox, options.instrumentation !== undefined),
  };
  Object.defineProperty(resolved, 'url', { value: shared.url, enumerable: false });
  return Object.freeze(resolved) as ResolvedRabbitMqConsumerOptions<Tx>;
}
