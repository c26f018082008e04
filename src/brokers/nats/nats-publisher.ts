import type { PubAck } from '@nats-io/jetstream';
import { PublishError } from '../../core/errors.js';
import type { OutboxMessage } from '../../core/message.js';
import type { Publisher, PublisherCapabilities } from '../../core/ports.js';
import { NatsConnectionManager } from './connection.js';
import { toPublishError } from './errors.js';
import { resolveNatsPublisherOptions, type NatsPublisherOptions } from './options.js';
import { bodyOf, headerBytes, headersOf, subjectFor } from './wire.js';

const NO_CAPABILITIES: PublisherCapabilities = Object.freeze({});

/**
 * Publishes to NATS JetStream: subject = topic (with the optional prefix), body = the stored body,
 * `Nats-Msg-Id` = the outbox id. `publish` resolves only on a PubAck (a `duplicate` PubAck included:
 * the stream already holds the message) and rejects with a PublishError otherwise, within
 * `publishTimeoutMs`. Connects at `verify()` or else on the first publish, so a relay can start while NATS is
 * down. Streams are the operator's: a subject no stream captures fails with OUTBOXER_NO_STREAM (the relay
 * pauses that topic).
 */
export function createNatsPublisher(input: NatsPublisherOptions): Publisher {
  const options = resolveNatsPublisherOptions(input);
  const { logger, publishTimeoutMs, subjectPrefix, secrets } = options;
  const connections = new NatsConnectionManager(options);
  const inFlight = new Set<Promise<unknown>>();
  let closed = false;
  let closing: Promise<void> | undefined;
  let capabilities = NO_CAPABILITIES;

  /** The body limit: the smaller of the option and the server's max_payload, once known. */
  const bodyLimit = (): number | undefined => {
    const learned = connections.maxPayload;
    if (options.maxMessageBytes === undefined) return learned;
    return learned === undefined ? options.maxMessageBytes : Math.min(learned, options.maxMessageBytes);
  };
  const currentCapabilities = (): PublisherCapabilities => {
    const limit = bodyLimit();
    if (limit !== capabilities.maxMessageBytes) capabilities = limit === undefined ? NO_CAPABILITIES : Object.freeze({ maxMessageBytes: limit });
    return capabilities;
  };

  const tooLarge = (id: string, bytes: number, limit: number, what: string): PublishError =>
    new PublishError(
      'OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER',
      `message ${id} is ${bytes} bytes, over ${what} of ${limit} bytes; lower maxPayloadBytes at enqueue (leave room for headers) or raise the limit`,
      { permanent: true },
    );

  async function send(message: OutboxMessage, deadline: number): Promise<void> {
    const subject = subjectFor(message, subjectPrefix);
    const body = bodyOf(message);
    if (options.maxMessageBytes !== undefined && body.length > options.maxMessageBytes) {
      throw tooLarge(message.id, body.length, options.maxMessageBytes, 'the maxMessageBytes option');
    }
    const headers = headersOf(message, options.cloudEvents);
    const context = { id: message.id, subject, timeoutMs: publishTimeoutMs, where: connections.where, secrets };
    const live = await connections.acquire(deadline);
    const maxPayload = live.nc.info?.max_payload;
    const wireBytes = body.length + headerBytes(headers, message.id);
    if (maxPayload !== undefined && wireBytes > maxPayload) {
      throw tooLarge(message.id, wireBytes, maxPayload, "the server's max_payload (body plus headers)");
    }
    const timeout = Math.max(1, Math.ceil(deadline - performance.now()));
    let ack: PubAck;
    try {
      ack = await connections.watch(live, live.js.publish(subject, body, { msgID: message.id, headers, timeout }), message.id);
    } catch (error) {
      throw toPublishError(error, context);
    }
    if (ack.duplicate) {
      logger.debug({ id: message.id, subject, stream: ack.stream, seq: ack.seq }, 'nats: duplicate PubAck, the stream already holds this message');
    }
  }

  /** `send`, never past the deadline even if the client misbehaves. */
  async function publishWithin(message: OutboxMessage): Promise<void> {
    const deadline = performance.now() + publishTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const guard = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new PublishError(
              'OUTBOXER_PUBLISH_TIMEOUT',
              `no PubAck for message ${message.id} within ${publishTimeoutMs} ms; it may have been stored anyway, and a retry with the same Nats-Msg-Id is deduplicated by the stream within its duplicate_window`,
            ),
          ),
        publishTimeoutMs + 100,
      );
    });
    const sending = send(message, deadline);
    sending.catch(() => undefined);
    try {
      await Promise.race([sending, guard]);
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    name: 'nats',
    get capabilities() {
      return currentCapabilities();
    },
    async publish(message: OutboxMessage): Promise<void> {
      if (closed) throw connections.closedError();
      const publishing = publishWithin(message);
      inFlight.add(publishing);
      try {
        await publishing;
      } finally {
        inFlight.delete(publishing);
      }
    },
    async verify(): Promise<void> {
      if (closed) throw connections.closedError();
      await connections.acquire(performance.now() + options.connectTimeoutMs); // the connection stays for the publishes
    },
    connectionState: () => connections.state,
    close(): Promise<void> {
      if (closing !== undefined) return closing;
      closed = true;
      closing = (async () => {
        // Publishes that already sent wait for their PubAck (each is bounded by publishTimeoutMs);
        // those still waiting for a connection give up at once with OUTBOXER_CLOSED.
        connections.beginClose();
        await Promise.allSettled([...inFlight]);
        await connections.close();
        logger.info({ servers: connections.where }, 'nats publisher closed');
      })();
      return closing;
    },
  };
}
