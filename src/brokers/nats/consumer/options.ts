import { z } from 'zod';
import { ConfigurationError } from '../../../core/errors.js';
import { parseOptions, wholeNumber } from '../../../core/parse-options.js';
import type { Logger } from '../../../core/ports.js';
import { isValidSubject, resolveNatsPublisherOptions, type ResolvedNatsPublisherOptions } from '../options.js';
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

export interface NatsConsumerOptions<Tx> {
  /** One server URL or several; credentials may ride in the URL (never logged). Required. */
  readonly servers: string | readonly string[];
  /** The stream the relay publishes into. Required (outboxer never creates streams). */
  readonly stream: string;
  /** The durable consumer's name, shared by every instance of this consumer. Required. */
  readonly durable: string;
  /** The inbox that makes handling effectively once. Required. */
  readonly inbox: Inbox<Tx>;
  /** Handles every message; default: the inbox registry's handler for the message type. */
  readonly handler?: MessageHandler<Tx> | undefined;
  /** Only subjects matching this filter (wildcards allowed). Default: all the stream holds. */
  readonly filterSubject?: string | undefined;
  /** The publisher's `subjectPrefix`, taken off the subject to give the topic back. Default none. */
  readonly subjectPrefix?: string | undefined;
  /** JetStream redelivers a message not acked within this time; kept alive while it is handled. Default 30000. */
  readonly ackWaitMs?: number | undefined;
  /** Deliveries before JetStream gives up on a message (-1: never). Default -1. */
  readonly maxDeliver?: number | undefined;
  /** Unacked messages at once (max_ack_pending), also the client's pull batch. Default 16. */
  readonly maxAckPending?: number | undefined;
  /** Create the durable consumer, or update its settings, at start. Default true. */
  readonly manageConsumer?: boolean | undefined;
  /** Bound on the connection handshake. Default 10000. */
  readonly connectTimeoutMs?: number | undefined;
  /** How long `stop()` waits for handlers in flight. Default 30000. */
  readonly stopTimeoutMs?: number | undefined;
  /** Client connection name. Default `outboxer-consumer`. */
  readonly name?: string | undefined;
  /** pino-compatible logger. Default: silent. */
  readonly logger?: Logger | undefined;
  /** Observers of each delivery's outcome. Default none. */
  readonly hooks?: ConsumerHooks | undefined;
  /** Observes each handling attempt, e.g. `createOtelInstrumentation(...).delivery` from `outboxer/otel`. Default none. */
  readonly instrumentation?: DeliveryInstrumentation | undefined;
  /** Deliveries handled in one inbox transaction at most; 1: each in its own. Default half of `maxAckPending` (at most 64); 1 with `instrumentation`. */
  readonly maxBatch?: number | undefined;
}

export interface ResolvedNatsConsumerOptions<Tx> {
  /** Servers, credentials (non-enumerable) and secrets, parsed as the publisher parses them. */
  readonly connection: ResolvedNatsPublisherOptions;
  readonly stream: string;
  readonly durable: string;
  readonly inbox: Inbox<Tx>;
  readonly handler: MessageHandler<Tx> | undefined;
  readonly filterSubject: string | undefined;
  readonly subjectPrefix: string | undefined;
  readonly ackWaitMs: number;
  readonly maxDeliver: number;
  readonly maxAckPending: number;
  readonly manageConsumer: boolean;
  readonly stopTimeoutMs: number;
  readonly logger: Logger;
  readonly hooks: ConsumerHooks;
  readonly instrumentation: DeliveryInstrumentation | undefined;
  readonly batching: Batching;
}

export const NATS_CONSUMER_DEFAULTS = Object.freeze({
  ackWaitMs: 30_000,
  maxDeliver: -1,
  maxAckPending: 16,
  manageConsumer: true,
  stopTimeoutMs: DEFAULT_STOP_TIMEOUT_MS,
  name: 'outboxer-consumer',
});

/** Stream and consumer names: no whitespace, dots, wildcards or path separators. */
const NAME = /^[A-Za-z0-9_-]{1,200}$/;
const FILTER_TOKEN = /^([A-Za-z0-9_\-:/]+|\*|>)$/;
const NAME_RULE = 'is required: 1 to 200 characters of [A-Za-z0-9_-]';

/** Every option but the connection's (`servers`, `connectTimeoutMs`, `name`, `logger`: the publisher's rules) and `hooks`. */
const consumerSchema = z
  .object({
    stream: z.string({ error: NAME_RULE }).regex(NAME, { error: NAME_RULE }),
    durable: z.string({ error: NAME_RULE }).regex(NAME, { error: NAME_RULE }),
    ...brokerConsumerShape,
    filterSubject: z
      .string({ error: 'must be a string' })
      .refine((filter) => filter.split('.').every((token) => FILTER_TOKEN.test(token)), {
        error: 'must be dot-separated subject tokens, `*` or a final `>`',
      })
      .optional(),
    subjectPrefix: z.string().refine(isValidSubject, { error: 'must be a NATS subject without wildcards' }).optional(),
    ackWaitMs: wholeNumber(1000, 3_600_000, 'milliseconds').default(NATS_CONSUMER_DEFAULTS.ackWaitMs),
    maxDeliver: wholeNumber(-1, 1_000_000)
      .refine((value) => value !== 0, { error: 'must be -1 (unlimited) or at least 1' })
      .default(NATS_CONSUMER_DEFAULTS.maxDeliver),
    maxAckPending: wholeNumber(1, 100_000).default(NATS_CONSUMER_DEFAULTS.maxAckPending),
    manageConsumer: z.boolean({ error: 'must be a boolean' }).default(NATS_CONSUMER_DEFAULTS.manageConsumer),
  })
  .strict();

/** The connection is resolved by the publisher's rules; its faults are named as this consumer's options. */
function resolveConnection<Tx>(input: NatsConsumerOptions<Tx>): ResolvedNatsPublisherOptions {
  return connectionByPublisherRules('nats', () =>
    resolveNatsPublisherOptions({
      servers: input.servers,
      connectTimeoutMs: input.connectTimeoutMs,
      logger: input.logger,
      name: input.name ?? NATS_CONSUMER_DEFAULTS.name,
      subjectPrefix: input.subjectPrefix,
    }),
  );
}

/** Resolves the consumer's options once: documented defaults, validated, frozen. Invalid → ConfigurationError naming the option and the fix. */
export function resolveNatsConsumerOptions<Tx>(input: NatsConsumerOptions<Tx>): ResolvedNatsConsumerOptions<Tx> {
  if (typeof input !== 'object' || input === null) {
    throw new ConfigurationError('OUTBOXER_INVALID_OPTION', 'nats consumer option (root): options must be an object with servers, stream, durable and inbox');
  }
  const connection = resolveConnection(input);
  const { servers: _servers, connectTimeoutMs: _connectTimeoutMs, name: _name, logger: _logger, hooks, ...rest } = input;
  const options = parseOptions(consumerSchema, rest, 'nats consumer', { alsoKnown: ['servers', 'connectTimeoutMs', 'name', 'logger', 'hooks'] });
  return Object.freeze({
    ...options,
    connection,
    inbox: options.inbox as Inbox<Tx>,
    handler: options.handler,
    filterSubject: options.filterSubject,
    subjectPrefix: options.subjectPrefix,
    instrumentation: options.instrumentation,
    batching: resolveBatching('nats', options.maxBatch, options.maxAckPending, options.inbox, options.instrumentation !== undefined),
    logger: connection.logger,
    hooks: Object.freeze({ ...hooks }),
  });
}
