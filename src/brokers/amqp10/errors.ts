import { type OutboxerErrorCode, PublishError } from '../../core/errors.js';
import { scrubSecrets } from '../../core/redact.js';

/** AMQP 1.0 error conditions (OASIS AMQP 1.0, part 2, section 2.8.15 and 2.8.16-2.8.18) outboxer reads. */
export const AmqpConditions = Object.freeze({
  notFound: 'amqp:not-found',
  unauthorizedAccess: 'amqp:unauthorized-access',
  decodeError: 'amqp:decode-error',
  invalidField: 'amqp:invalid-field',
  notImplemented: 'amqp:not-implemented',
  messageSizeExceeded: 'amqp:link:message-size-exceeded',
  resourceLimitExceeded: 'amqp:resource-limit-exceeded',
});

/** Conditions that say this message can never be taken as it is. */
const REFUSES_THE_MESSAGE = new Set<string>([AmqpConditions.decodeError, AmqpConditions.invalidField, AmqpConditions.notImplemented]);

/** What the broker said, secrets removed: a condition (`amqp:not-found`) and a description. */
export interface BrokerError {
  readonly condition: string | undefined;
  readonly description: string;
}

const MAX_DESCRIPTION = 400;

/** Reads an AMQP error (a rhea ConnectionError, an `error` of a detach/end/close/rejected, a socket error). */
export function brokerError(error: unknown, secrets: readonly string[]): BrokerError {
  const fields = (typeof error === 'object' && error !== null ? error : {}) as {
    condition?: unknown;
    code?: unknown;
    description?: unknown;
    message?: unknown;
    name?: unknown;
  };
  const condition =
    typeof fields.condition === 'string' ? fields.condition : typeof fields.code === 'string' && fields.code.startsWith('amqp:') ? fields.code : undefined;
  const raw = [fields.description, fields.message, typeof fields.code === 'string' ? fields.code : undefined, fields.name].find(
    (text) => typeof text === 'string' && text !== '',
  );
  let description = scrubSecrets(typeof raw === 'string' ? raw : typeof error === 'string' ? error : 'no reason given', secrets);
  if (description.length > MAX_DESCRIPTION) description = `${description.slice(0, MAX_DESCRIPTION - 1)}…`;
  return { condition, description };
}

function said(error: BrokerError): string {
  return error.condition === undefined ? error.description : `${error.condition}: ${error.description}`;
}

const MAYBE_STORED = 'the broker may have stored it; a retry keeps the same message-id';

/**
 * Every PublishError the AMQP 1.0 publisher raises. Messages name the message id, the address and the redacted
 * URL, never a password or a payload. They say what happened; what the relay does next is `publish-failure.ts`'s.
 */
export function amqp10Errors(where: string) {
  /** The target is missing or refused: the same meaning whether the attach, the session or a disposition said it. */
  const byCondition = (id: string, address: string, error: BrokerError, what: string): PublishError | undefined => {
    if (error.condition === AmqpConditions.notFound) {
      return new PublishError(
        'OUTBOXER_UNROUTABLE',
        `message ${id}: address "${address}" does not exist at ${where} (${what}: ${said(error)}); create the exchange, queue or topic, or fix the address option`,
      );
    }
    if (error.condition === AmqpConditions.unauthorizedAccess) {
      return new PublishError(
        'OUTBOXER_AUTH_FAILED',
        `message ${id}: the broker at ${where} does not let this user send to "${address}" (${what}: ${said(error)}); grant it write access`,
      );
    }
    if (error.condition === AmqpConditions.messageSizeExceeded) {
      return new PublishError(
        'OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER',
        `message ${id} is larger than the broker at ${where} takes on "${address}" (${said(error)})`,
        { permanent: true },
      );
    }
    return undefined;
  };
  return {
    closed(id: string): PublishError {
      return new PublishError('OUTBOXER_CLOSED', `the amqp10 publisher for ${where} is closed; message ${id} was not published`);
    },
    /** A connection attempt that failed (SASL, TCP, TLS, protocol, timeout). */
    connect(error: BrokerError, prefix = ''): PublishError {
      if (error.condition === AmqpConditions.unauthorizedAccess) {
        return new PublishError(
          'OUTBOXER_AUTH_FAILED',
          `${prefix}the broker at ${where} refused the user name or password (${said(error)}): check the credentials of the URL`,
        );
      }
      if (/Invalid protocol header/i.test(error.description)) {
        return new PublishError(
          'OUTBOXER_WRONG_PROTOCOL',
          `${prefix}the server at ${where} does not speak AMQP 1.0 (${said(error)}): is that the broker's AMQP port (5672, or 5671 with amqps://)?`,
        );
      }
      return new PublishError('OUTBOXER_BROKER_UNAVAILABLE', `${prefix}cannot connect to the AMQP 1.0 broker at ${where} (${said(error)})`);
    },
    /** The connection died with this message in flight or waiting. */
    lost(id: string, error: BrokerError, sent: boolean): PublishError {
      return new PublishError(
        'OUTBOXER_BROKER_UNAVAILABLE',
        sent
          ? `message ${id} was not confirmed: the connection to ${where} was lost (${said(error)}); ${MAYBE_STORED}`
          : `message ${id} was not sent: the connection to ${where} was lost (${said(error)})`,
      );
    },
    /** The link (or its session) was refused at attach, or detached with this message in flight. */
    detached(id: string, address: string, error: BrokerError, sent: boolean): PublishError {
      return (
        byCondition(id, address, error, sent ? 'link detached' : 'attach refused') ??
        new PublishError(
          'OUTBOXER_PUBLISH_FAILED',
          `message ${id}: the link to "${address}" at ${where} was closed (${said(error)})${sent ? `; ${MAYBE_STORED}` : ''}`,
        )
      );
    },
    rejected(id: string, address: string, error: BrokerError): PublishError {
      const known = byCondition(id, address, error, 'rejected');
      if (known !== undefined) return known;
      const code: OutboxerErrorCode =
        error.condition !== undefined && REFUSES_THE_MESSAGE.has(error.condition) ? 'OUTBOXER_REJECTED' : 'OUTBOXER_PUBLISH_FAILED';
      return new PublishError(code, `message ${id} was rejected by the broker at ${where} on "${address}" (${said(error)})`, {
        permanent: code === 'OUTBOXER_REJECTED',
      });
    },
    released(id: string, address: string, outcome: 'released' | 'modified'): PublishError {
      return new PublishError(
        'OUTBOXER_PUBLISH_FAILED',
        `message ${id} was ${outcome} by the broker at ${where} on "${address}": it did not take it this time`,
      );
    },
    tooLarge(id: string, bytes: number, limit: number, whose: string): PublishError {
      return new PublishError(
        'OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER',
        `message ${id} is ${bytes} bytes, over ${whose} of ${limit} bytes; it can never be published there (lower maxPayloadBytes at enqueue)`,
        { permanent: true },
      );
    },
    timeout(id: string, stage: string, timeoutMs: number): PublishError {
      const sent = stage.startsWith('sent');
      return new PublishError(
        'OUTBOXER_PUBLISH_TIMEOUT',
        `no disposition from ${where} for message ${id} within publishTimeoutMs (${timeoutMs} ms): ${stage}${sent ? `; ${MAYBE_STORED}` : ''}`,
      );
    },
  };
}

export type Amqp10Errors = ReturnType<typeof amqp10Errors>;
