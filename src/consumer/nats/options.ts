import { ConfigurationError } from '../../core/errors.js';
import type { Logger } from '../../core/ports.js';
import { isValidSubject, resolveNatsPublisherOptions, type ResolvedNatsPublisherOptions } from '../../publishers/nats/options.js';
import type { DeliveryInstrumentation } from '../delivery-instrumentation.js';
import type { ConsumerHooks } from '../delivery-runner.js';
import type { Inbox } from '../inbox.js';
import type { MessageHandler } from '../message-registry.js';

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
  readonly logger?: Logger | undefined;
  readonly hooks?: ConsumerHooks | undefined;
  /** Observes each handling attempt, e.g. `createOtelInstrumentation(...).delivery` from `outboxer/otel`. Default none. */
  readonly instrumentation?: DeliveryInstrumentation | undefined;
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
}

export const NATS_CONSUMER_DEFAULTS = Object.freeze({
  ackWaitMs: 30_000,
  maxDeliver: -1,
  maxAckPending: 16,
  manageConsumer: true,
  stopTimeoutMs: 30_000,
  name: 'outboxer-consumer',
});

const KNOWN = new Set([
  'servers',
  'stream',
  'durable',
  'inbox',
  'handler',
  'filterSubject',
  'subjectPrefix',
  'ackWaitMs',
  'maxDeliver',
  'maxAckPending',
  'manageConsumer',
  'connectTimeoutMs',
  'stopTimeoutMs',
  'name',
  'logger',
  'hooks',
  'instrumentation',
]);
/** Stream and consumer names: no whitespace, dots, wildcards or path separators. */
const NAME = /^[A-Za-z0-9_-]{1,200}$/;
const FILTER_TOKEN = /^([A-Za-z0-9_\-:/]+|\*|>)$/;

function fail(option: string, problem: string): never {
  throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `nats consumer option ${option}: ${problem}`);
}

function int(option: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) fail(option, `must be an integer from ${min} to ${max}`);
  return value;
}

/** Resolves the consumer's options once: documented defaults, validated, frozen. Throws ConfigurationError. */
export function resolveNatsConsumerOptions<Tx>(input: NatsConsumerOptions<Tx>): ResolvedNatsConsumerOptions<Tx> {
  if (typeof input !== 'object' || input === null) fail('(root)', 'options must be an object');
  for (const name of Object.keys(input)) if (!KNOWN.has(name)) fail(name.slice(0, 60), `is not a known option (known: ${[...KNOWN].join(', ')})`);
  let connection: ResolvedNatsPublisherOptions;
  try {
    connection = resolveNatsPublisherOptions({
      servers: input.servers,
      connectTimeoutMs: input.connectTimeoutMs,
      logger: input.logger,
      name: input.name ?? NATS_CONSUMER_DEFAULTS.name,
      subjectPrefix: input.subjectPrefix,
    });
  } catch (error) {
    if (error instanceof ConfigurationError) throw new ConfigurationError(error.code, error.message.replace('nats publisher option', 'nats consumer option'));
    throw error;
  }
  for (const option of ['stream', 'durable'] as const) {
    if (typeof input[option] !== 'string' || !NAME.test(input[option])) fail(option, 'is required: 1 to 200 characters of [A-Za-z0-9_-]');
  }
  if (typeof input.inbox !== 'object' || input.inbox === null || typeof input.inbox.handleDelivery !== 'function') fail('inbox', 'is required: an Inbox');
  if (input.handler !== undefined && typeof input.handler !== 'function') fail('handler', 'must be a function (message, tx) => Promise<void>');
  if (input.instrumentation !== undefined && typeof (input.instrumentation as Partial<DeliveryInstrumentation> | null)?.process !== 'function') {
    fail('instrumentation', 'must have a process(attempt, handle) method (e.g. createOtelInstrumentation(...).delivery from outboxer/otel)');
  }
  const { filterSubject } = input;
  if (filterSubject !== undefined && (typeof filterSubject !== 'string' || !filterSubject.split('.').every((t) => FILTER_TOKEN.test(t)))) {
    fail('filterSubject', 'must be dot-separated subject tokens, `*` or a final `>`');
  }
  if (input.manageConsumer !== undefined && typeof input.manageConsumer !== 'boolean') fail('manageConsumer', 'must be a boolean');
  const maxDeliver = int('maxDeliver', input.maxDeliver, NATS_CONSUMER_DEFAULTS.maxDeliver, -1, 1_000_000);
  if (maxDeliver === 0) fail('maxDeliver', 'must be -1 (unlimited) or at least 1');
  const subjectPrefix = input.subjectPrefix;
  if (subjectPrefix !== undefined && !isValidSubject(subjectPrefix)) fail('subjectPrefix', 'must be a NATS subject without wildcards');
  return Object.freeze({
    connection,
    stream: input.stream,
    durable: input.durable,
    inbox: input.inbox,
    handler: input.handler,
    filterSubject,
    subjectPrefix,
    ackWaitMs: int('ackWaitMs', input.ackWaitMs, NATS_CONSUMER_DEFAULTS.ackWaitMs, 1000, 3_600_000),
    maxDeliver,
    maxAckPending: int('maxAckPending', input.maxAckPending, NATS_CONSUMER_DEFAULTS.maxAckPending, 1, 100_000),
    manageConsumer: input.manageConsumer ?? NATS_CONSUMER_DEFAULTS.manageConsumer,
    stopTimeoutMs: int('stopTimeoutMs', input.stopTimeoutMs, NATS_CONSUMER_DEFAULTS.stopTimeoutMs, 1, 3_600_000),
    logger: connection.logger,
    hooks: Object.freeze({ ...input.hooks }),
    instrumentation: input.instrumentation,
  });
}
