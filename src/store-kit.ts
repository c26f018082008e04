/**
 * `outboxer/store-kit`: the ports a store author implements beyond what applications use (docs/design.md,
 * "Layers, and what a new database or ORM adapter touches"): the relay's role with its partition leases and reader, the
 * dialect bundle the CLI opens a store through, and the partition engine of a table that resizes live.
 * Applications need none of these; the package root exports what they use.
 */
export type {
  CompletionOutcome,
  FailedMessage,
  HeldMessage,
  HeldPartition,
  LiveRelay,
  Membership,
  PartitionCompletion,
  PartitioningConfig,
  PartitionLease,
  PartitionMessage,
  PartitionReader,
  PartitionReadOptions,
  PartitionReadOutcome,
  PartitionReadRequest,
  PartitionReadResult,
  RecheckRange,
  RelayLeases,
  RelayReport,
  RelayStore,
} from './core/ports.js';
export type { InboxClaim, InboxDeadEntry, InboxEntryRef, InboxFailureRecord, InboxStats, InboxStore } from './core/ports/inbox-store.js';
export type {
  DialectCapabilities,
  DialectStore,
  MigrationInfo,
  OpenedStore,
  StoreConnectionSettings,
  StoreDialect,
  StoreTarget,
  StoreTuning,
} from './core/ports/store-dialect.js';
export type {
  EngineRelay,
  EngineRelays,
  EngineState,
  PartitionEngine,
  ResizeCancellation,
  ResizeProgress,
  ResizeRequest,
  ResizeResult,
} from './core/ports/partition-engine.js';
export { defineTransaction, isOutboxTransaction, type OutboxTransaction, type SqlDialect, type TransactionStatus } from './core/ports/outbox-transaction.js';
export { STORE_DIALECTS, type DialectEntry } from './stores/dialects.js';
