import { MessageValidationError, type OutboxerErrorCode } from '../core/errors.js';

/** The codes of the consumer side's own errors. */
export type ConsumerErrorCode = Extract<OutboxerErrorCode, 'OUTBOXER_UNKNOWN_TYPE' | 'OUTBOXER_MALFORMED_MESSAGE'>;

/** A message type the registry does not know. It is never resolved by name: the message goes dead. */
export class UnknownMessageTypeError extends MessageValidationError {
  readonly type: string;

  constructor(type: string) {
    super(
      'OUTBOXER_UNKNOWN_TYPE',
      `message type ${JSON.stringify(type.slice(0, 100))} is not registered; register it (type -> schema -> handler) to handle it`,
    );
    this.type = type;
  }
}

/** A delivery that cannot be rebuilt into a message (no UUID id, no type, a body that is not JSON). */
export class MalformedMessageError extends MessageValidationError {
  constructor(message: string) {
    super('OUTBOXER_MALFORMED_MESSAGE', message);
  }
}
