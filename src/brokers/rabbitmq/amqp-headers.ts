/** AMQP headers outboxer sets on every message, so consumers that read only headers get everything. */
export const OutboxAmqpHeaders = Object.freeze({
  id: 'x-outbox-id',
  type: 'x-outbox-type',
  /** Present only when the message has a key. */
  key: 'x-outbox-key',
});

/**
 * Prefix of the CloudEvents attributes in AMQP headers. The AMQP binding allows `cloudEvents_` and
 * `cloudEvents:` and prefers `_`, which JMS clients and selectors accept (`:` is not a JMS identifier).
 */
export const CLOUD_EVENTS_AMQP_PREFIX = 'cloudEvents_';

/** `app-id` property of every message outboxer publishes. */
export const OUTBOXER_APP_ID = 'outboxer';
