import { PublishError } from '../../core/errors.js';
import type { OutboxMessage } from '../../core/message.js';
import type { Logger, Publisher, PublisherCapabilities } from '../../core/ports.js';
import { BackgroundReconnect } from '../background-reconnect.js';
import { ConnectionStateTracker } from '../connection-state.js';
import { classifyConnectError, ConnectFailure, mqttErrors } from './errors.js';
import { type MqttLink, openLink } from './link.js';
import { type MqttPublisherOptions, resolveMqttPublisherOptions } from './options.js';
import { type MqttPublication, toMqttPublication } from './wire.js';

/** One publish in progress, from the call to its settlement. */
interface Attempt {
  readonly id: string;
  /** Not sent yet (waiting for a connection, or for room in the broker's Receive Maximum), or waiting for its PUBACK. */
  stage: 'connecting' | 'window' | 'puback';
  settled: boolean;
  /** Wakes the attempt while it waits for room. */
  wake: (() => void) | undefined;
  finish(error?: PublishError): void;
}

/**
 * Publishes to an MQTT 5 broker with QoS 1: `publish` resolves only on a PUBACK with a success reason code (0x00, or
 * 0x10 "no matching subscribers"), and rejects with a PublishError on a failure reason code, a lost connection or
 * `publishTimeoutMs`. Connects at `verify()` or else on the first publish; after a loss or a failed attempt
 * reconnects in the background (1 s, doubling to 30 s) and on the next publish (one attempt shared by every
 * publish waiting for it). Never more QoS 1 publishes in flight than the broker's Receive Maximum.
 */
export function createMqttPublisher(input: MqttPublisherOptions): Publisher {
  const options = resolveMqttPublisherOptions(input);
  const { redactedUrl, clientId, secrets } = options;
  const errors = mqttErrors(options);
  const log = safeLogger(options.logger);
  const attempts = new Map<Attempt, Promise<void>>();
  let current: MqttLink | undefined;
  let connecting: Promise<MqttLink> | undefined;
  let closed = false; // no new publish
  let retired = false; // no publish left: a link that opens now is closed at once
  let closing: Promise<void> | undefined;
  let brokerPacketLimit: number | undefined;
  let capabilities: PublisherCapabilities = Object.freeze(options.maxMessageBytes === undefined ? {} : { maxMessageBytes: options.maxMessageBytes });
  const connection = new ConnectionStateTracker();
  const reconnect = new BackgroundReconnect(() => {
    if (closed || (current !== undefined && !current.dead)) return;
    acquireLink().catch(() => undefined); // a failure schedules the next try
  });

  const learnLimit = (limit: number | undefined): void => {
    brokerPacketLimit = limit;
    const limits = [options.maxMessageBytes, limit].filter((value): value is number => value !== undefined);
    capabilities = Object.freeze(limits.length === 0 ? {} : { maxMessageBytes: Math.min(...limits) });
  };

  const onDeath = (link: MqttLink, reason: string): void => {
    if (current !== link) return;
    current = undefined;
    connection.lost();
    if (!closed) reconnect.schedule();
    log('warn', { url: redactedUrl, clientId, reason }, 'mqtt connection lost; reconnecting in the background and on the next publish');
  };

  /** The current link, or the one connection attempt every waiting publish shares. */
  const acquireLink = (): Promise<MqttLink> => {
    if (current !== undefined && !current.dead) return Promise.resolve(current);
    if (connecting !== undefined) return connecting;
    connection.attempting();
    const opened = openLink(options, onDeath).then((link) => {
      if (link.dead) throw new ConnectFailure('closed', 'the connection dropped right after its CONNACK');
      return link;
    });
    connecting = opened.then(
      (link) => {
        connecting = undefined;
        if (retired) {
          void link.retire();
          throw errors.closed();
        }
        current = link;
        learnLimit(link.maximumPacketSize);
        connection.connected();
        reconnect.connected();
        log('info', { url: redactedUrl, clientId, receiveMaximum: link.receiveMaximum, maximumPacketSize: link.maximumPacketSize }, 'mqtt publisher connected');
        return link;
      },
      (error: unknown) => {
        connecting = undefined;
        connection.attemptFailed();
        if (!closed) reconnect.schedule();
        const failure = classifyConnectError(error, secrets);
        log('warn', { url: redactedUrl, clientId, kind: failure.kind, reason: failure.reason }, 'mqtt connection attempt failed');
        throw failure;
      },
    );
    return connecting;
  };

  const settle = (attempt: Attempt, error?: PublishError): void => {
    if (attempt.settled) return;
    attempt.settled = true;
    attempt.wake?.();
    attempt.finish(error);
  };

  /** Resolves when the link may have room (or died, or the attempt settled); the caller checks again. */
  const nextRoom = (link: MqttLink, attempt: Attempt): Promise<void> =>
    new Promise<void>((resolve) => {
      const unsubscribe = link.onRoomOrDeath(() => {
        attempt.wake = undefined;
        resolve();
      });
      attempt.wake = () => {
        unsubscribe();
        resolve();
      };
    });

  const run = async (attempt: Attempt, publication: MqttPublication): Promise<void> => {
    let link: MqttLink;
    try {
      link = await acquireLink();
    } catch (error) {
      if (error instanceof PublishError) return settle(attempt, errors.closed(attempt.id)); // closed while connecting
      return settle(attempt, errors.connect(attempt.id, classifyConnectError(error, secrets)));
    }
    if (attempt.settled) return;
    const limit = link.maximumPacketSize;
    if (limit !== undefined && publication.packetBytes > limit) {
      return settle(
        attempt,
        errors.tooLarge(attempt.id, publication.packetBytes, limit, "the broker's Maximum Packet Size (the whole PUBLISH: body, topic and user properties)"),
      );
    }
    attempt.stage = 'window';
    // No await between the last check for room and the send: concurrent publishes must not all see the same free slot.
    while (!link.hasRoom && !link.dead && !attempt.settled) await nextRoom(link, attempt);
    if (attempt.settled) {
      link.passRoom();
      return;
    }
    if (link.dead) return settle(attempt, errors.lost(attempt.id, 'it dropped while the message waited to be sent'));
    attempt.stage = 'puback';
    link.send(publication, (outcome) => {
      if (outcome.kind === 'acked') settle(attempt, errors.puback(attempt.id, publication.topic, outcome.reasonCode, outcome.reasonString));
      else if (outcome.kind === 'lost') settle(attempt, errors.lost(attempt.id, outcome.reason));
      else settle(attempt, errors.unexpected(attempt.id, outcome.reason));
    });
  };

  const shutdown = async (): Promise<void> => {
    closed = true;
    reconnect.stop();
    // Not sent yet: give up at once. Sent: wait for the PUBACK (each is bounded by publishTimeoutMs).
    for (const attempt of attempts.keys()) if (attempt.stage !== 'puback') settle(attempt, errors.closed(attempt.id));
    await Promise.all(attempts.values());
    retired = true; // a connection attempt still running closes itself when it ends (within connectTimeoutMs)
    const link = current;
    current = undefined;
    if (link !== undefined) await link.retire();
    connection.closed();
    log('info', { url: redactedUrl, clientId }, 'mqtt publisher closed');
  };

  return {
    name: 'mqtt',
    get capabilities() {
      return capabilities;
    },
    publish(message: OutboxMessage): Promise<void> {
      if (closed) return Promise.reject(errors.closed(message.id));
      let publication: MqttPublication;
      try {
        publication = toMqttPublication(message, options.topicPrefix);
      } catch (error) {
        return Promise.reject(error);
      }
      const bodyBytes = publication.payload.length;
      if (options.maxMessageBytes !== undefined && bodyBytes > options.maxMessageBytes) {
        return Promise.reject(errors.tooLarge(message.id, bodyBytes, options.maxMessageBytes, 'the maxMessageBytes option'));
      }
      if (brokerPacketLimit !== undefined && publication.packetBytes > brokerPacketLimit) {
        return Promise.reject(
          errors.tooLarge(
            message.id,
            publication.packetBytes,
            brokerPacketLimit,
            "the broker's Maximum Packet Size (the whole PUBLISH: body, topic and user properties)",
          ),
        );
      }
      let attempt!: Attempt;
      const done = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => settle(attempt, errors.timeout(message.id, attempt.stage)), options.publishTimeoutMs);
        attempt = {
          id: message.id,
          stage: 'connecting',
          settled: false,
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
      run(attempt, publication).catch((error: unknown) =>
        settle(attempt, errors.unexpected(message.id, error instanceof Error ? error.message : 'unexpected failure')),
      );
      return done;
    },
    async verify(): Promise<void> {
      if (closed) throw errors.closed();
      try {
        await acquireLink(); // the connection stays open for the publishes
      } catch (error) {
        throw error instanceof PublishError ? error : errors.refused(classifyConnectError(error, secrets));
      }
    },
    connectionState: () => connection.state,
    close(): Promise<void> {
      closing ??= shutdown();
      return closing;
    },
  };
}

type Level = keyof Logger;

/** A logger that can never throw into the client's event handlers. */
function safeLogger(logger: Logger): (level: Level, fields: Record<string, unknown>, message: string) => void {
  return (level, fields, message) => {
    try {
      logger[level](fields, message);
    } catch {
      // a broken logger must not break publishing
    }
  };
}
