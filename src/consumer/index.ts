export { MalformedMessageError, UnknownMessageTypeError, type ConsumerErrorCode } from './errors.js';
export { Inbox, type HandleOutcome } from './inbox.js';
export { resolveInboxOptions, type InboxHooks, type InboxOptions, type InboxOptionsInput } from './inbox-options.js';
export { INBOX_RETENTION_DEFAULTS, InboxRetention, type InboxRetentionOptions } from './inbox-retention.js';
export type { InboxClaim, InboxDeadEntry, InboxEntryRef, InboxFailureRecord, InboxStats, InboxStore } from '../core/ports/inbox-store.js';
export { MessageRegistry, validateOutgoing, type MessageHandler, type OutgoingValidator } from './message-registry.js';
export { parsePayloadJson, rebuildMessage, type RawDelivery, type ReceivedMessage } from './received-message.js';
export { isStandardSchema, type StandardSchemaV1 } from './standard-schema.js';
export { withOrmTransactions, type OrmTransactionsOptions, type PortClaimingInboxStore } from './with-orm-transactions.js';
export type { ConsumerHooks } from './delivery-runner.js';
export type { DeliveryAttempt, DeliveryInstrumentation, DeliverySource } from './delivery-instrumentation.js';
export {
  inboxMigrations,
  inboxMigrationScript,
  POSTGRES_INBOX_DEFAULTS,
  PostgresInboxStore,
  resolveInboxTableName,
  runInboxMigrations,
  type InboxMigration,
  type PostgresInboxStoreOptions,
} from '../stores/postgres/inbox/index.js';
