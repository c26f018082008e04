import { PublishError } from '../../core/errors.js';
import type { OutboxMessage } from '../../core/message.js';
import { LinkOpenError } from './driver.js';
import type { LinkFailure } from './link.js';
import type { ResolvedRabbitMqPublisherOptions } from './options.js';

/** Where a publish was when its time ran out. */
export type AttemptStage = 'connecting' | 'backpressure' | 'confirm';

const STAGE_TEXT: Record<AttemptStage, string> = {
  connecting: 'still waiting for a connection',
  backpressure: 'still waiting for the channel to drain (backpressure)',
  confirm: 'sent, but the confirm never came',
};

const MAYBE_STORED = 'the broker may have stored it; a retry keeps the same message id';
/** AMQP reply code of a channel closed because the exchange does not exist. */
const NOT_FOUND = 404;
/** What amqplib says when the credentials are refused. */
const ACCESS_REFUSED = /ACCESS.REFUSED|\b403\b/;
/** amqplib's words for a vhost refused (missing, or no permission): the broker closes the connection at open. */
const VHOST_REFUSED = /Expected ConnectionOpenOk|NOT_ALLOWED|\b530\b/;
/** What amqplib meets on a port that does not speak AMQP 0-9-1 (PostgreSQL closes at once, NATS greets in text). */
const NOT_AMQP = /exceeds maxFrameSize|closed abruptly during opening handshake|Unexpected frame|Invalid frame|protocol header/i;

function vhostOf(url: string): string {
  try {
    const path = new URL(url).pathname;
    return path === '' || path === '/' ? '/' : decodeURIComponent(path.slice(1));
  } catch {
    return '?';
  }
}

/**
 * Every PublishError the RabbitMQ publisher raises. Messages name the message id, the exchange and the
 * redacted URL, never a password or a payload; driver reasons arrive already scrubbed. They say what happened,
 * never what comes next: whether a failure is retried or parked is the relay's to say (`publish-failure.ts`).
 */
export function publishErrors(options: ResolvedRabbitMqPublisherOptions) {
  const { redactedUrl, exchange } = options;
  /** Why a connection could not be opened, with a stable code: a misconfiguration, or an outage. */
  const refused = (error: LinkOpenError): PublishError => {
    if (error.stage === 'exchange') {
      return new PublishError(
        'OUTBOXER_EXCHANGE_REFUSED',
        `cannot declare exchange "${exchange}" (${options.exchangeType}, durable) at ${redactedUrl}: ${error.reason}; it may exist with another type or durability, or the user may not configure it (set the exchange type, or declareExchange: false)`,
      );
    }
    if (error.stage === 'connect' && ACCESS_REFUSED.test(error.reason)) {
      return new PublishError(
        'OUTBOXER_AUTH_FAILED',
        `RabbitMQ at ${redactedUrl} refused the user name or password (${error.reason}): check the credentials of the URL`,
      );
    }
    if (error.stage === 'connect' && VHOST_REFUSED.test(error.reason)) {
      return new PublishError(
        'OUTBOXER_VHOST_REFUSED',
        `RabbitMQ at ${redactedUrl} refused virtual host "${vhostOf(options.url)}" (${error.reason}): it does not exist or the user has no permission on it (rabbitmqctl add_vhost / set_permissions), or the URL's path is wrong`,
      );
    }
    if (error.stage === 'connect' && NOT_AMQP.test(error.reason)) {
      return new PublishError(
        'OUTBOXER_WRONG_PROTOCOL',
        `the server at ${redactedUrl} does not speak AMQP 0-9-1 (${error.reason}): is that RabbitMQ's port (5672, or 5671 with amqps://)?`,
      );
    }
    return new PublishError('OUTBOXER_BROKER_UNAVAILABLE', `cannot connect to RabbitMQ at ${redactedUrl} (${error.reason})`);
  };
  return {
    tooLarge(message: OutboxMessage, bytes: number, limit: number, whose: string): PublishError {
      return new PublishError(
        'OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER',
        `message ${message.id} is ${bytes} bytes, over ${whose} of ${limit} bytes; it can never be published to RabbitMQ (lower maxPayloadBytes at enqueue)`,
        { permanent: true },
      );
    },
    headersTooLarge(message: OutboxMessage, reason: string): PublishError {
      return new PublishError(
        'OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER',
        `message ${message.id} cannot be encoded for RabbitMQ (${reason}); its headers are too large`,
        { permanent: true },
      );
    },
    cannotEncode(message: OutboxMessage, reason: string): PublishError {
      return new PublishError('OUTBOXER_PUBLISH_FAILED', `message ${message.id} cannot be encoded for RabbitMQ (${reason})`, { permanent: true });
    },
    unroutable(message: OutboxMessage, replyCode: unknown, replyText: unknown): PublishError {
      return new PublishError(
        'OUTBOXER_UNROUTABLE',
        `message ${message.id} was returned by RabbitMQ (${String(replyCode ?? 312)} ${String(replyText ?? 'NO_ROUTE')}): no queue is bound to exchange "${exchange}" for routing key "${message.topic}"; the topic waits, without using up attempts, until one is (bind a queue or give the exchange an alternate exchange)`,
      );
    },
    nacked(message: OutboxMessage): PublishError {
      return new PublishError(
        'OUTBOXER_PUBLISH_FAILED',
        `message ${message.id} was nacked by RabbitMQ: it did not store it (a queue at its length limit with overflow reject-publish, or a resource alarm on the broker)`,
      );
    },
    lost(message: OutboxMessage, failure: LinkFailure): PublishError {
      if (failure.scope === 'channel' && failure.replyCode === NOT_FOUND) {
        return new PublishError(
          'OUTBOXER_NO_EXCHANGE',
          `message ${message.id} was not published: exchange "${exchange}" does not exist at ${redactedUrl} (${failure.reason}); the topic waits, without using up attempts, until it does (declare it, or leave declareExchange on)`,
        );
      }
      return failure.scope === 'connection'
        ? new PublishError(
            'OUTBOXER_BROKER_UNAVAILABLE',
            `message ${message.id} was not confirmed: the connection to RabbitMQ at ${redactedUrl} was lost (${failure.reason}); ${MAYBE_STORED}`,
          )
        : new PublishError(
            'OUTBOXER_PUBLISH_FAILED',
            `message ${message.id} was not confirmed: RabbitMQ closed the channel (${failure.reason}); ${MAYBE_STORED}`,
          );
    },
    lostBeforeSend(message: OutboxMessage): PublishError {
      return new PublishError(
        'OUTBOXER_BROKER_UNAVAILABLE',
        `message ${message.id} was not sent: the connection to RabbitMQ at ${redactedUrl} was lost while it waited to be sent`,
      );
    },
    connect(message: OutboxMessage, error: LinkOpenError): PublishError {
      const why = refused(error);
      return new PublishError(why.code, `message ${message.id} was not sent: ${why.message}`);
    },
    refused,
    timeout(message: OutboxMessage, stage: AttemptStage): PublishError {
      return new PublishError(
        'OUTBOXER_PUBLISH_TIMEOUT',
        `no confirmation from RabbitMQ for message ${message.id} within confirmTimeoutMs (${options.confirmTimeoutMs} ms): ${STAGE_TEXT[stage]}; ${MAYBE_STORED}`,
      );
    },
    unexpected(message: OutboxMessage, reason: string): PublishError {
      return new PublishError('OUTBOXER_PUBLISH_FAILED', `message ${message.id} was not published: ${reason}`);
    },
  };
}

/** Anything a connection attempt may reject with, as a LinkOpenError with a scrubbed reason. */
export function asLinkOpenError(error: unknown, describe: (error: unknown) => string): LinkOpenError {
  return error instanceof LinkOpenError ? error : new LinkOpenError('connect', describe(error));
}
