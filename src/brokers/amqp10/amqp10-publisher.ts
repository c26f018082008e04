import { OutboxerError, type PublishError } from '../../core/errors.js';
import { bodyByteLength, type OutboxMessage } from '../../core/message.js';
import type { Publisher, PublisherCapabilities } from '../../core/ports.js';
import { BackgroundReconnect } from '../background-reconnect.js';
import { ConnectionStateTracker } from '../connection-state.js';
import { ConnectFailure, type LiveConnection, openConnection } from './connection.js';
import { amqp10Errors, type BrokerError, brokerError } from './errors.js';
import { type Amqp10PublisherOptions, resolveAmqp10PublisherOptions } from './options.js';
import { type Attempt, SenderLink } from './sender-link.js';
import { addressFor, toAmqp10Message } from './wire.js';

/**
 * Publishes to an AMQP 1.0 broker (Azure Service Bus, ActiveMQ Artemis, Qpid, RabbitMQ's AMQP 1.0 plugin): one
 * connection, one sender link per target address (at most `maxSenders`, least recently used idle ones detached),
 * every message sent unsettled. `publish` resolves on the Accepted disposition and rejects with a PublishError on
 * Rejected, Released, Modified, a detach, a lost connection or `publishTimeoutMs`. Connects at `verify()` or the
 * first publish; after a loss or a failed attempt, connects again in the background (1 s, doubling to 30 s) and on
 * the next publish (one attempt shared by all).
 *
 * @example
 * const publisher = createAmqp10Publisher({ url: 'amqp://guest:guest@127.0.0.1:5672', address: '/exchange/outbox/{topic}' });
 */
export function createAmqp10Publisher(input: Amqp10PublisherOptions): Publisher {
  const options = resolveAmqp10PublisherOptions(input);
  const { redactedUrl, logger } = options;
  const errors = amqp10Errors(redactedUrl);
  const attempts = new Map<Attempt, Promise<void>>();
  const state = new ConnectionStateTracker();
  let current: LiveConnection | undefined;
  let connecting: Promise<LiveConnection> | undefined;
  let closed = false;
  let closing: Promise<void> | undefined;
  const log = (level: 'info' | 'warn', fields: Record<string, unknown>, message: string): void => {
    try {
      logger[level]({ url: redactedUrl, ...fields }, message);
    } catch {
      // a broken logger must not break publishing
    }
  };
  const reconnect = new BackgroundReconnect(() => {
    if (closed || (current !== undefined && !current.dead)) return;
    acquire().catch(() => undefined); // a failure schedules the next try
  });
  const capabilities: PublisherCapabilities = Object.freeze(options.maxMessageBytes === undefined ? {} : { maxMessageBytes: options.maxMessageBytes });

  const lost = (live: LiveConnection, error: BrokerError): void => {
    if (current === live) {
      current = undefined;
      state.lost();
      if (!closed) reconnect.schedule();
    }
    for (const link of live.links.values()) link.connectionLost(error);
    live.links.clear();
    log('warn', { reason: error.description, condition: error.condition }, 'amqp10 connection lost; reconnecting in the background and on the next publish');
  };

  /** The open connection, or the one attempt every waiting publish shares. */
  const acquire = (): Promise<LiveConnection> => {
    if (current !== undefined && !current.dead) return Promise.resolve(current);
    if (connecting === undefined) state.attempting();
    connecting ??= openConnection(options, lost).then(
      (live) => {
        connecting = undefined;
        if (closed) {
          void live.close();
          throw new ConnectFailure({ condition: undefined, description: 'the publisher closed while connecting' });
        }
        current = live;
        state.connected();
        reconnect.connected();
        log('info', { containerId: options.containerId }, 'amqp10 publisher connected');
        return live;
      },
      (error: unknown) => {
        connecting = undefined;
        state.attemptFailed();
        if (!closed) reconnect.schedule();
        const failure = error instanceof ConnectFailure ? error.broker : brokerError(error, options.secrets);
        log('warn', { reason: failure.description, condition: failure.condition }, 'amqp10 connection attempt failed');
        throw error instanceof ConnectFailure ? error : new ConnectFailure(failure);
      },
    );
    return connecting;
  };

  /** The link for `address` on `live`, attached now if there is none; idle links beyond maxSenders are detached. */
  const linkFor = (live: LiveConnection, address: string): SenderLink => {
    const existing = live.links.get(address);
    if (existing !== undefined && !existing.dead) {
      live.links.delete(address);
      live.links.set(address, existing);
      return existing;
    }
    const link = new SenderLink(live.connection, address, errors, options.secrets, (dead) => {
      if (live.links.get(dead.address) === dead) live.links.delete(dead.address);
    });
    live.links.set(address, link);
    for (const [name, other] of live.links) {
      if (live.links.size <= options.maxSenders) break;
      if (other === link || other.busy) continue;
      live.links.delete(name);
      other.retire();
    }
    return link;
  };

  const run = async (attempt: Attempt, address: string): Promise<void> => {
    let live: LiveConnection;
    try {
      live = await acquire();
    } catch (error) {
      const failure = error instanceof ConnectFailure ? error.broker : brokerError(error, options.secrets);
      return attempt.settle(errors.connect(failure, `message ${attempt.id} was not sent: `));
    }
    if (attempt.settled) return;
    if (live.dead) return attempt.settle(errors.lost(attempt.id, { condition: undefined, description: 'closed before the message was sent' }, false));
    attempt.stage = 'attaching';
    linkFor(live, address).submit(attempt);
  };

  const shutdown = async (): Promise<void> => {
    closed = true;
    reconnect.stop();
    await Promise.all(attempts.values()); // each one is bounded by publishTimeoutMs
    const live = current ?? (await connecting?.catch(() => undefined));
    current = undefined;
    if (live !== undefined) await live.close();
    state.closed();
    log('info', {}, 'amqp10 publisher closed');
  };

  return {
    name: 'amqp10',
    capabilities,
    publish(message: OutboxMessage): Promise<void> {
      if (closed) return Promise.reject(errors.closed(message.id));
      const bytes = bodyByteLength(message.body);
      if (options.maxMessageBytes !== undefined && bytes > options.maxMessageBytes) {
        return Promise.reject(errors.tooLarge(message.id, bytes, options.maxMessageBytes, 'the maxMessageBytes option'));
      }
      let wire: ReturnType<typeof toAmqp10Message>;
      let address: string;
      try {
        wire = toAmqp10Message(message);
        address = addressFor(message, options.address);
      } catch (error) {
        return Promise.reject(error);
      }
      let attempt!: Attempt;
      let link: SenderLink | undefined;
      const done = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => attempt.settle(errors.timeout(message.id, attempt.stage, options.publishTimeoutMs)), options.publishTimeoutMs);
        attempt = {
          id: message.id,
          wire,
          bytes,
          stage: 'connecting',
          settled: false,
          delivery: undefined,
          settle(error?: PublishError) {
            if (attempt.settled) return;
            attempt.settled = true;
            clearTimeout(timer);
            link ??= current?.links.get(address);
            link?.forget(attempt);
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
      run(attempt, address).catch((error: unknown) =>
        attempt.settle(errors.connect(brokerError(error, options.secrets), `message ${message.id} was not sent: `)),
      );
      return done;
    },
    async verify(): Promise<void> {
      if (closed) throw new OutboxerError('OUTBOXER_CLOSED', `the amqp10 publisher for ${redactedUrl} is closed`);
      try {
        await acquire(); // the connection stays open for the publishes
      } catch (error) {
        throw errors.connect(error instanceof ConnectFailure ? error.broker : brokerError(error, options.secrets));
      }
    },
    connectionState: () => state.state,
    close(): Promise<void> {
      closing ??= shutdown();
      return closing;
    },
  };
}
