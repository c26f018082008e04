import type { Message } from 'amqplib';
import { OutboxerError } from '../../core/errors.js';
import { bodyByteLength, type OutboxMessage } from '../../core/message.js';
import type { Publisher, PublisherCapabilities } from '../../core/ports.js';
import { secretsOfUrl } from '../../core/redact.js';
import { BackgroundReconnect } from '../background-reconnect.js';
import { ConnectionStateTracker } from '../connection-state.js';
import { brokerSizeLimitOf, describeDriverError, safeLogger } from './driver.js';
import { type Link, type LinkFailure, type LinkHooks, openLink } from './link.js';
import { type RabbitMqPublisherOptions, resolveRabbitMqPublisherOptions } from './options.js';
import { asLinkOpenError, type AttemptStage, publishErrors } from './publish-errors.js';
import { type AmqpPublication, toAmqpPublication } from './wire.js';

/** One publish in progress, from the call to its settlement. */
interface Attempt {
  readonly message: OutboxMessage;
  readonly bytes: number;
  stage: AttemptStage;
  settled: boolean;
  link: Link<Attempt> | undefined;
  wake: (() => void) | undefined;
  finish(error?: OutboxerError): void;
}

/**
 * Publishes to a RabbitMQ exchange through a confirm channel: `publish` resolves only on the broker's ack
 * for a routed message; a return (no queue bound), a nack, a lost connection or `confirmTimeoutMs` make it
 * reject with a PublishError. Connects at `verify()` (declaring the exchange), or else on the first publish;
 * after a loss or a failed attempt reconnects in the background (1 s, doubling to 30 s) and on the next publish
 * (one attempt shared by every publish waiting for it).
 */
export function createRabbitMqPublisher(input: RabbitMqPublisherOptions): Publisher {
  const options = resolveRabbitMqPublisherOptions(input);
  const { redactedUrl, exchange } = options;
  const secrets = secretsOfUrl(options.url);
  const describe = (error: unknown): string => describeDriverError(error, secrets);
  const errors = publishErrors(options);
  const log = safeLogger(options.logger);
  const attempts = new Map<Attempt, Promise<void>>();
  let current: Link<Attempt> | undefined;
  let connecting: Promise<Link<Attempt>> | undefined;
  let closed = false; // no new publish
  let retired = false; // no publish left: a link that opens now is closed at once
  let closing: Promise<void> | undefined;
  const connection = new ConnectionStateTracker();
  // Started by a timer while no publish comes, so that an idle relay's health follows the broker.
  const reconnect = new BackgroundReconnect(() => {
    if (closed || (current !== undefined && !current.dead)) return;
    acquireLink().catch(() => undefined); // a failure schedules the next try
  });

  const capabilities: PublisherCapabilities = Object.freeze(options.maxMessageBytes === undefined ? {} : { maxMessageBytes: options.maxMessageBytes });

  const settle = (attempt: Attempt, error?: OutboxerError): void => {
    if (attempt.settled) return;
    attempt.settled = true;
    attempt.link?.untrack(attempt);
    attempt.wake?.();
    attempt.finish(error);
  };

  const hooks: LinkHooks<Attempt> = {
    lost(link: Link<Attempt>, failure: LinkFailure) {
      if (current === link) {
        current = undefined;
        connection.lost();
        if (!closed) reconnect.schedule();
      }
      const limit = brokerSizeLimitOf(failure.reason);
      const unconfirmed = [...link.inFlight];
      for (const attempt of unconfirmed) {
        if (limit !== undefined && attempt.bytes > limit)
          settle(attempt, errors.tooLarge(attempt.message, attempt.bytes, limit, "the broker's max_message_size"));
        else settle(attempt, errors.lost(attempt.message, failure));
      }
      log(
        'warn',
        { url: redactedUrl, scope: failure.scope, reason: failure.reason, unconfirmed: unconfirmed.length },
        'rabbitmq connection lost; reconnecting in the background and on the next publish',
      );
    },
    returned(link: Link<Attempt>, returned: Message) {
      // The return comes before the ack of the same message (which the broker sends anyway): match it by id.
      const id: unknown = returned.properties.messageId;
      const attempt = typeof id === 'string' ? link.oldestInFlight(id) : undefined;
      if (attempt === undefined) return;
      const fields = returned.fields as unknown as { replyCode?: unknown; replyText?: unknown };
      settle(attempt, errors.unroutable(attempt.message, fields.replyCode, fields.replyText));
    },
  };

  /** The current link, or the one connection attempt every waiting publish shares. */
  const acquireLink = (): Promise<Link<Attempt>> => {
    if (current !== undefined && !current.dead) return Promise.resolve(current);
    if (connecting === undefined) connection.attempting();
    connecting ??= openLink<Attempt>(options, hooks).then(
      (link) => {
        connecting = undefined;
        if (retired) void link.retire();
        else {
          current = link;
          connection.connected();
          reconnect.connected();
        }
        log('info', { url: redactedUrl, exchange, clientName: options.clientName }, 'rabbitmq publisher connected');
        return link;
      },
      (error: unknown) => {
        connecting = undefined;
        connection.attemptFailed();
        if (!closed) reconnect.schedule();
        const failure = asLinkOpenError(error, describe);
        log('warn', { url: redactedUrl, stage: failure.stage, reason: failure.reason }, 'rabbitmq connection attempt failed');
        throw failure;
      },
    );
    return connecting;
  };

  const onConfirm = (link: Link<Attempt>, attempt: Attempt, error: unknown): void => {
    if (error === null || error === undefined) {
      settle(attempt); // a returned message was already rejected: its late ack changes nothing
      return;
    }
    // amqplib reports a nack as 'message nacked' and a closed channel as 'channel closed'; the link's own
    // close handling knows why it closed, so let it run first.
    queueMicrotask(() => {
      if (attempt.settled) return;
      if (!link.dead && error instanceof Error && error.message === 'message nacked') {
        settle(attempt, errors.nacked(attempt.message));
        return;
      }
      const failure: LinkFailure = { scope: 'channel', reason: describe(error), replyCode: undefined };
      link.fail(failure);
      settle(attempt, errors.lost(attempt.message, failure));
    });
  };

  const send = (link: Link<Attempt>, attempt: Attempt, publication: AmqpPublication): void => {
    attempt.link = link;
    attempt.stage = 'confirm';
    link.track(attempt);
    let writable: boolean;
    link.coalesceWrites();
    try {
      writable = link.channel.publish(exchange, publication.routingKey, publication.body, publication.properties, (error: unknown) =>
        onConfirm(link, attempt, error),
      );
    } catch (error) {
      // Encoding errors are thrown before anything is written: the channel stays usable.
      if (error instanceof RangeError) return settle(attempt, errors.headersTooLarge(attempt.message, describe(error)));
      if (error instanceof TypeError) return settle(attempt, errors.cannotEncode(attempt.message, describe(error)));
      const failure: LinkFailure = { scope: 'channel', reason: describe(error), replyCode: undefined };
      link.fail(failure); // the channel was already closed
      return settle(attempt, errors.lost(attempt.message, failure));
    }
    if (!writable) link.needsDrain = true;
  };

  const run = async (attempt: Attempt, publication: AmqpPublication): Promise<void> => {
    let link: Link<Attempt>;
    try {
      link = await acquireLink();
    } catch (error) {
      return settle(attempt, errors.connect(attempt.message, asLinkOpenError(error, describe)));
    }
    while (link.needsDrain && !link.dead && !attempt.settled) {
      attempt.stage = 'backpressure';
      let unsubscribe: () => void = () => undefined;
      await new Promise<void>((resolve) => {
        attempt.wake = resolve;
        unsubscribe = link.onDrainOrDeath(resolve);
      });
      unsubscribe();
      attempt.wake = undefined;
    }
    if (attempt.settled) return;
    if (link.dead) return settle(attempt, errors.lostBeforeSend(attempt.message));
    send(link, attempt, publication);
  };

  const shutdown = async (): Promise<void> => {
    closed = true;
    await Promise.all(attempts.values()); // each one is bounded by confirmTimeoutMs
    retired = true; // a connection attempt still running closes itself when it ends (within connectTimeoutMs)
    const link = current;
    current = undefined;
    if (link !== undefined) await link.retire();
    connection.closed();
    log('info', { url: redactedUrl }, 'rabbitmq publisher closed');
  };

  return {
    name: 'rabbitmq',
    capabilities,
    async publish(message: OutboxMessage): Promise<void> {
      if (closed) throw new OutboxerError('OUTBOXER_CLOSED', `rabbitmq publisher is closed; message ${message.id} was not published`);
      const bytes = bodyByteLength(message.body);
      if (options.maxMessageBytes !== undefined && bytes > options.maxMessageBytes) {
        throw errors.tooLarge(message, bytes, options.maxMessageBytes, 'the maxMessageBytes option');
      }
      const publication = toAmqpPublication(message, options.cloudEvents);
      let attempt!: Attempt;
      const done = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => settle(attempt, errors.timeout(message, attempt.stage)), options.confirmTimeoutMs);
        attempt = {
          message,
          bytes,
          stage: 'connecting',
          settled: false,
          link: undefined,
          wake: undefined,
          finish(error) {
            clearTimeout(timer);
            attempts.delete(attempt);
            if (error === undefined) resolve();
            else reject(error);
          },
        };
      });
      attempts.set(
        attempt,
        done.catch(() => undefined),
      );
      run(attempt, publication).catch((error: unknown) => settle(attempt, errors.unexpected(message, describe(error))));
      return done;
    },
    async verify(): Promise<void> {
      if (closed) throw new OutboxerError('OUTBOXER_CLOSED', 'rabbitmq publisher is closed');
      try {
        await acquireLink(); // the connection stays open for the publishes, its exchange declared
      } catch (error) {
        throw errors.refused(asLinkOpenError(error, describe));
      }
    },
    connectionState: () => connection.state,
    close(): Promise<void> {
      reconnect.stop();
      closing ??= shutdown();
      return closing;
    },
  };
}
