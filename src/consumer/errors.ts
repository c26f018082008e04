import { MessageValidationError, type OutboxerErrorCode } from '../core/errors.js';

/**
 * Codes the consumer side needs beyond `OutboxerErrorCode`. Until they join that union in core/errors.ts,
 * the classes below carry them at runtime (and in `describeError` texts, so in `last_error` columns).
 */
export type ConsumerErrorCode = 'OUTBOXER_UNKNOWN_TYPE' | 'OUTBOXER_MALFORMED_MESSAGE';

function asCode(code: ConsumerErrorCode): OutboxerErrorCode {
  return code as string as OutboxerErrorCode;
}

/** A message type the registry does not know. It is never resolved by name: the message goes dead. */
export class UnknownMessageTypeError extends MessageValidationError {
  readonly type: string;

  constructor(type: string) {
    super(
      asCode('OUTBOXER_UNKNOWN_TYPE'),
      `message type ${JSON.stringify(type.slice(0, 100))} is not registered; register it (type -> schema -> handler) to handle it`,
    );
    this.type = type;
  }
}

/** A delivery that cannot be rebuilt into a message (no UUID id, no type, a body that is not JSON). */
export class MalformedMessageError extends MessageValidationError {
  constructor(message: string) {
    super(asCode('OUTBOXER_MALFORMED_MESSAGE'), message);
  }
}
