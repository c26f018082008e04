export {
  ConfigurationError,
  describeError,
  isPermanentPublishError,
  MessageValidationError,
  OutboxerError,
  PublishError,
  type OutboxerErrorCode,
} from './core/errors.js';
export { newMessageId } from './core/ids.js';
export { quoteIdentifier, validateIdentifier } from './core/identifiers.js';
export { createJsonLogger, silentLogger } from './core/logger.js';
export {
  BINARY_CONTENT_TYPE,
  bodyByteLength,
  bodyBytes,
  JSON_CONTENT_TYPE,
  WellKnownHeaders,
  type DeadMessage,
  type MessageBody,
  type MessageHeaders,
  type MessageState,
  type NewOutboxMessage,
  type OutboxMessage,
  type OutboxMessageInput,
} from './core/message.js';
export { DEFAULT_MAX_PAYLOAD_BYTES, Outbox, type OutboxOptions, type StoreForOutbox, type TransactionRunner } from './core/outbox.js';
export type { EnqueueInstrumentation, EnqueueReceipt } from './core/ports/enqueue-instrumentation.js';
export type {
  CommitNotifier,
  Logger,
  OutboxGauges,
  OutboxOperator,
  PendingMessage,
  PendingMessageDetail,
  PendingQuery,
  RelayGroup,
  RelayGroupMember,
  RelayTopicPause,
  TopicLag,
  TopicPause,
  DestinationPause,
  OutboxSchema,
  OutboxStats,
  OutgoingValidator,
  OutboxStore,
  OutboxWriter,
  Publisher,
  PublisherCapabilities,
  WakeSignal,
} from './core/ports.js';
export { redactUrl } from './core/redact.js';
export { Relay, type StoreForRelay } from './core/relay.js';
export type { BrokerConnectionState, RelayHealth } from './core/relay-health.js';
export { resolveRelayOptions, type RelayHooks, type RelayOptions, type RelayOptionsInput } from './core/relay-options.js';
export { FAILURE_ACTIONS, failureAction, type FailureAction } from './core/publish-failure.js';
export { retryDelayMs, type RetryPolicy } from './core/retry-policy.js';
export { isMisconfiguration, MISCONFIGURATION_CODES } from './core/start-checks.js';
export { validateMessage, type MessageLimits } from './core/validate-message.js';
