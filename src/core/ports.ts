import type { OutboxMessage } from './message.js';
import type { BrokerConnectionState } from './relay-health.js';
import type { OutboxOperator } from './ports/outbox-operator.js';
import type { OutboxSchema } from './ports/outbox-schema.js';
import type { OutboxWriter } from './ports/outbox-writer.js';
import type { RelayStore } from './ports/relay-store.js';

export type {
  DestinationFilter,
  DestinationPause,
  OutboxGauges,
  OutboxOperator,
  OutboxStats,
  RelayGroup,
  RelayGroupMember,
  RelayTopicPause,
  TopicLag,
  TopicPause,
} from './ports/outbox-operator.js';
export type { PendingMessage, PendingMessageDetail, PendingMessageOperator, PendingQuery } from './ports/pending-messages.js';
export type { OutboxSchema } from './ports/outbox-schema.js';
export type { OutboxWriter } from './ports/outbox-writer.js';
export type {
  CompletionOutcome,
  FailedMessage,
  HeldMessage,
  PartitionCompleteOptions,
  PartitionCompletion,
  PartitionMessage,
  PartitionReader,
  PartitionReadOptions,
  PartitionReadOutcome,
  PartitionReadRequest,
  PartitionReadResult,
  RecheckRange,
} from './ports/partition-reader.js';
export { MAX_TAKE } from './ports/partition-reader.js';
export type { HeldPartition, LiveRelay, Membership, PartitionLease, PartitioningConfig, RelayLeases, RelayReport } from './ports/relay-leases.js';
export type { RelayStore } from './ports/relay-store.js';

/**
 * The whole storage port: every role a database implements, each a few atomic operations that every
 * database implements the same way. `Tx` is what the caller's transaction looks like for this database.
 * Each consumer takes only its role: producers the writer, `Relay` the relay role (with the partition leases and reader), the CLI's `status` and
 * `dead` the operator role, `migrate` the schema role.
 */
export interface OutboxStore<Tx = unknown> extends OutboxWriter<Tx>, RelayStore, OutboxOperator, OutboxSchema {}

/** What a broker publisher can tell the relay about itself. */
export interface PublisherCapabilities {
  /** The broker's own per-message limit, if known: larger bodies fail permanently without a round trip. */
  readonly maxMessageBytes?: number;
}

/**
 * The publisher port. `publish` resolves only once the broker has confirmed it stored the message,
 * and rejects with a PublishError otherwise (a timeout included). Many publishes may be in flight at once.
 */
export interface Publisher {
  readonly name: string;
  readonly capabilities: PublisherCapabilities;
  publish(message: OutboxMessage): Promise<void>;
  /**
   * Optional start check: connects now (instead of at the first publish) and declares what the publisher owns
   * (the RabbitMQ exchange). Rejects with a MisconfigurationError for what no retry can mend (wrong
   * credentials, vhost, port or protocol; an exchange declared differently), or with a PublishError
   * `OUTBOXER_BROKER_UNAVAILABLE` while the broker is out of reach. Default: no check.
   */
  verify?(): Promise<void>;
  /** Optional: the broker connection now, read from memory (for health checks and metrics). Default: unknown. */
  connectionState?(): BrokerConnectionState;
  close(): Promise<void>;
}

/** pino-compatible logging surface: `logger.info({ ...fields }, 'message')`. */
export interface Logger {
  debug(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/**
 * A hint that new messages were committed somewhere (another process, a trigger): the relay claims at
 * once instead of at its next poll. Only a hint: polling stays the source of truth, so a lost signal
 * costs latency, never a message.
 */
export interface WakeSignal {
  start(onWake: () => void): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Checks a payload against the schema registered for its type before it is stored (a `MessageRegistry`
 * from `outboxer/consumer` is one). Returns what to store, or throws a MessageValidationError; an unknown
 * type is refused, never resolved by name.
 */
export interface OutgoingValidator {
  /** `where` names the message in the error (`message <id>`) when the caller gave it an id. */
  validateOutgoing(type: string, payload: unknown, where?: string): unknown;
}

/** Tells relays in other processes that a transaction with outbox messages committed. */
export interface CommitNotifier {
  notify(): void;
  close(): Promise<void>;
}
