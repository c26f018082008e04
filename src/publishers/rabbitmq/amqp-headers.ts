/** AMQP headers outboxer sets on every message, so consumers that read only headers get everything. */
export const OutboxAmqpHeaders = Object.freeze({
  id: 'x-outbox-id',
  type: 'x-outbox-type',
  /** Present only when the message has a key. */
  key: 'x-outbox-key',
});

/** `app-id` property of every message outboxer publishes. */
export const OUTBOXER_APP_ID = 'outboxer';
