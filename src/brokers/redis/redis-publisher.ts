import { PublishError } from '../../core/errors.js';
import type { OutboxMessage } from '../../core/message.js';
import type { Publisher, PublisherCapabilities } from '../../core/ports.js';
import { RedisConnection } from './connection.js';
import { replicasMissing, timeoutError, toConnectError, toPublishError } from './errors.js';
import { resolveRedisPublisherOptions, type RedisPublisherOptions } from './options.js';
import { type RedisEntry, toRedisEntry } from './wire.js';

type Stage = 'connecting' | 'reply' | 'replicas';

/**
 * Publishes to Redis Streams: one `XADD <streamPrefix><topic> [MAXLEN ~ n] * id … body …` per message. `publish`
 * resolves only on the XADD reply (the entry id), and, with `waitReplicas`, once `WAIT` says that many replicas have
 * it; otherwise it rejects with a PublishError within `publishTimeoutMs`. Connects at `verify()` or on the first
 * publish, so a relay can start while Redis is down. Every publish shares one connection, pipelined.
 */
export function createRedisPublisher(input: RedisPublisherOptions): Publisher {
  const options = resolveRedisPublisherOptions(input);
  const { publishTimeoutMs, redactedUrl, secrets, logger } = options;
  const connection = new RedisConnection(options);
  const inFlight = new Set<Promise<unknown>>();
  const trim = options.maxLen === undefined ? undefined : ({ TRIM: { strategy: 'MAXLEN', strategyModifier: '~', threshold: options.maxLen } } as const);
  const capabilities: PublisherCapabilities = Object.freeze(options.maxMessageBytes === undefined ? {} : { maxMessageBytes: options.maxMessageBytes });
  let closed = false;
  let closing: Promise<void> | undefined;

  async function send(message: OutboxMessage, entry: RedisEntry, deadline: number, signal: AbortSignal, at: { stage: Stage }): Promise<void> {
    const live = await connection.acquire(deadline);
    at.stage = 'reply';
    const context = { id: message.id, stream: entry.stream, where: redactedUrl, secrets };
    try {
      // An XADD not yet written when the time runs out is taken out of the client's queue: it is never stored.
      await live.client.withAbortSignal(signal).xAdd(entry.stream, '*', entry.fields, trim);
    } catch (error) {
      throw toPublishError(error, context);
    }
    if (options.waitReplicas === 0) return;
    at.stage = 'replicas';
    let acknowledged: number;
    try {
      acknowledged = await live.replicas.acknowledged();
    } catch (error) {
      throw toPublishError(error, context);
    }
    if (acknowledged < options.waitReplicas) throw replicasMissing(message.id, entry.stream, acknowledged, options.waitReplicas, options.waitTimeoutMs);
  }

  async function publishWithin(message: OutboxMessage): Promise<void> {
    const entry = toRedisEntry(message, options.streamPrefix);
    if (options.maxMessageBytes !== undefined && entry.bodyBytes > options.maxMessageBytes) {
      throw new PublishError(
        'OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER',
        `message ${message.id} is ${entry.bodyBytes} bytes, over the maxMessageBytes option of ${options.maxMessageBytes} bytes; lower maxPayloadBytes at enqueue or raise maxMessageBytes`,
        { permanent: true },
      );
    }
    const at: { stage: Stage } = { stage: 'connecting' };
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const guard = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        abort.abort();
        reject(timeoutError(message.id, publishTimeoutMs, at.stage));
      }, publishTimeoutMs);
    });
    const sending = send(message, entry, performance.now() + publishTimeoutMs, abort.signal, at);
    sending.catch(() => undefined);
    try {
      await Promise.race([sending, guard]);
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    name: 'redis',
    capabilities,
    async publish(message: OutboxMessage): Promise<void> {
      if (closed) throw new PublishError('OUTBOXER_CLOSED', `the redis publisher for ${redactedUrl} is closed; message ${message.id} was not published`);
      const publishing = publishWithin(message);
      inFlight.add(publishing);
      try {
        await publishing;
      } finally {
        inFlight.delete(publishing);
      }
    },
    async verify(): Promise<void> {
      if (closed) throw connection.closedError();
      // The attempt bounds itself by connectTimeoutMs; the margin lets its own, more precise error arrive first.
      const live = await connection.acquire(performance.now() + options.connectTimeoutMs + 1000);
      try {
        await live.client.ping();
      } catch (error) {
        throw toConnectError(error, redactedUrl, secrets);
      }
    },
    connectionState: () => connection.state,
    close(): Promise<void> {
      if (closing !== undefined) return closing;
      closed = true;
      closing = (async () => {
        // Publishes already sent wait for their reply (each bounded by publishTimeoutMs); those waiting for a connection end with OUTBOXER_CLOSED.
        connection.beginClose();
        await Promise.allSettled([...inFlight]);
        await connection.close();
        logger.info({ url: redactedUrl }, 'redis publisher closed');
      })();
      return closing;
    },
  };
}
