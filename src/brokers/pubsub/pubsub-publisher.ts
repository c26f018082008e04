import { type ClientConfig, PubSub, type PublishOptions, type Topic } from '@google-cloud/pubsub';
import { PublishError } from '../../core/errors.js';
import type { OutboxMessage } from '../../core/message.js';
import type { Publisher, PublisherCapabilities } from '../../core/ports.js';
import { BackgroundReconnect } from '../background-reconnect.js';
import { ConnectionStateTracker } from '../connection-state.js';
import { driverMessage, GrpcStatus, grpcStatusOf, toPublishError, toVerifyError } from './errors.js';
import { type PubSubPublisherOptions, type ResolvedPubSubPublisherOptions, resolvePubSubPublisherOptions } from './options.js';
import { PUBSUB_LIMITS, topicIdFor, toPubSubPublication } from './wire.js';

const CAPABILITIES: PublisherCapabilities = Object.freeze({ maxMessageBytes: PUBSUB_LIMITS.messageBytes });

function clientConfigOf(options: ResolvedPubSubPublisherOptions): ClientConfig {
  const config: ClientConfig = { ...options.clientConfig, projectId: options.projectId };
  if (options.apiEndpoint !== undefined) config.apiEndpoint = options.apiEndpoint;
  // An emulator needs no credentials, but the client still asks Application Default Credentials for the universe
  // domain, probing the GCE metadata server (seconds, and a MetadataLookupWarning off GCP): naming it skips that.
  if (options.emulator) Object.assign(config, { emulatorMode: true, universeDomain: options.clientConfig.universeDomain ?? 'googleapis.com' });
  return config;
}

function publishOptionsOf(options: ResolvedPubSubPublisherOptions): PublishOptions {
  return {
    messageOrdering: options.ordering,
    batching: { ...options.batching },
    // One RPC per batch, bounded by publishTimeoutMs: the relay retries, with backoff, and tells an outage
    // (released uncounted) from a failure; the client's own retries would turn an outage into timeouts.
    gaxOpts: { timeout: options.publishTimeoutMs, retry: { retryCodes: [] } },
  };
}

/**
 * Publishes to Google Cloud Pub/Sub: topic id = `topicPrefix` + topic, data = the stored body, attributes = the
 * headers plus `outbox-id`, `outbox-type`, `outbox-key`, `content-type`, ordering key = the key (with `ordering`).
 * `publish` resolves once Pub/Sub answered with a server message id (it stored the message) and rejects with a
 * PublishError otherwise, within `publishTimeoutMs`. Topics are the operator's: a missing one fails with
 * OUTBOXER_NO_STREAM (the relay pauses that topic). No I/O until `verify()` or the first publish.
 */
export function createPubSubPublisher(input: PubSubPublisherOptions): Publisher {
  const options = resolvePubSubPublisherOptions(input);
  const { logger, publishTimeoutMs, secrets } = options;
  const where = `project "${options.projectId}" at ${options.apiEndpoint ?? 'the default endpoint'}`;
  const client = new PubSub(clientConfigOf(options));
  const publishOptions = publishOptionsOf(options);
  const topics = new Map<string, Topic>();
  /** Publishes in flight per topic id and ordering key, until the client settles them. */
  const keysInFlight = new Map<string, number>();
  const inFlight = new Set<Promise<unknown>>();
  const connection = new ConnectionStateTracker();
  const reconnect = new BackgroundReconnect(() => void probe().catch(() => undefined));
  let closed = false;
  let closing: Promise<void> | undefined;

  const closedError = (id?: string): PublishError =>
    new PublishError('OUTBOXER_CLOSED', `the Pub/Sub publisher for ${where} is closed${id === undefined ? '' : `; message ${id} was not published`}`);

  const reached = (): void => {
    if (connection.state !== 'connected')
      logger.info({ projectId: options.projectId, apiEndpoint: options.apiEndpoint }, 'pubsub publisher reached the service');
    connection.connected();
    reconnect.connected();
  };
  const unreachable = (reason: string): void => {
    if (closed) return;
    if (connection.state === 'connected') {
      connection.lost();
      logger.warn({ projectId: options.projectId, apiEndpoint: options.apiEndpoint, error: reason }, 'pubsub publisher cannot reach the service');
    } else connection.attemptFailed();
    reconnect.schedule();
  };

  /** One cheap call that needs the service and the credentials: list at most one topic. */
  async function probe(): Promise<void> {
    connection.attempting();
    try {
      const listing = client.getTopics({ pageSize: 1, autoPaginate: false, gaxOpts: { timeout: publishTimeoutMs, retry: { retryCodes: [] } } });
      // Finding credentials comes before the call and is not bounded by its timeout.
      await bounded(listing, publishTimeoutMs + 100, () => new Error(`no answer within ${publishTimeoutMs} ms`));
    } catch (error) {
      // Listing topics needs pubsub.topics.list, which a publisher-only service account lacks: being refused
      // the permission (or the project) still proves the service answered and took the credentials.
      const status = grpcStatusOf(error);
      if (status !== GrpcStatus.PERMISSION_DENIED && status !== GrpcStatus.NOT_FOUND) {
        const failure = toVerifyError(error, where, secrets);
        unreachable(failure.message);
        throw failure;
      }
    }
    reached();
  }

  const topicFor = (topicId: string): Topic => {
    let topic = topics.get(topicId);
    if (topic === undefined) {
      topic = client.topic(topicId, publishOptions);
      topics.set(topicId, topic);
    }
    return topic;
  };

  async function send(message: OutboxMessage): Promise<void> {
    const topicId = topicIdFor(message, options.topicPrefix);
    const publication = toPubSubPublication(message, options.ordering);
    const topic = topicFor(topicId);
    const { orderingKey } = publication;
    const slot = orderingKey === undefined ? undefined : `${topicId}\n${orderingKey}`;
    if (slot !== undefined && orderingKey !== undefined) {
      // After a failed publish the client pauses its key and rejects every later publish of it until
      // resumePublishing: the relay retries a key only once nothing of it is in flight, so resume then.
      const count = keysInFlight.get(slot) ?? 0;
      if (count === 0) topic.resumePublishing(orderingKey);
      keysInFlight.set(slot, count + 1);
    }
    const context = { id: message.id, topicId, where, timeoutMs: publishTimeoutMs, secrets };
    let serverId: string;
    try {
      serverId = await topic.publishMessage({
        data: publication.data,
        attributes: { ...publication.attributes },
        ...(orderingKey === undefined ? {} : { orderingKey }),
      });
    } catch (error) {
      const failure = toPublishError(error, context);
      if (failure.code === 'OUTBOXER_BROKER_UNAVAILABLE') unreachable(failure.message);
      else if (failure.code !== 'OUTBOXER_PUBLISH_TIMEOUT' && failure.code !== 'OUTBOXER_AUTH_FAILED') reached();
      throw failure;
    } finally {
      if (slot !== undefined) {
        const left = (keysInFlight.get(slot) ?? 1) - 1;
        if (left === 0) keysInFlight.delete(slot);
        else keysInFlight.set(slot, left);
      }
    }
    reached();
    logger.debug({ id: message.id, topicId, serverId }, 'pubsub: stored');
  }

  /** `send`, never past publishTimeoutMs even if the client misbehaves. */
  async function publishWithin(message: OutboxMessage): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const guard = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new PublishError(
              'OUTBOXER_PUBLISH_TIMEOUT',
              `no message id from Pub/Sub for message ${message.id} within ${publishTimeoutMs} ms; it may have been stored anyway, and consumers deduplicate a retried copy by its outbox-id attribute`,
            ),
          ),
        publishTimeoutMs + 100,
      );
    });
    const sending = send(message);
    sending.catch(() => undefined);
    try {
      await Promise.race([sending, guard]);
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    name: 'pubsub',
    capabilities: CAPABILITIES,
    async publish(message: OutboxMessage): Promise<void> {
      if (closed) throw closedError(message.id);
      const publishing = publishWithin(message);
      inFlight.add(publishing);
      try {
        await publishing;
      } finally {
        inFlight.delete(publishing);
      }
    },
    async verify(): Promise<void> {
      if (closed) throw closedError();
      await probe();
    },
    connectionState: () => connection.state,
    close(): Promise<void> {
      closing ??= (async () => {
        closed = true;
        reconnect.stop();
        await Promise.allSettled([...inFlight]); // each bounded by publishTimeoutMs
        await bounded(client.close(), publishTimeoutMs).catch((error: unknown) => {
          logger.warn({ error: driverMessage(error, secrets) }, 'pubsub publisher: closing the client failed');
        });
        connection.closed();
        logger.info({ projectId: options.projectId }, 'pubsub publisher closed');
      })();
      return closing;
    },
  };
}

/** Waits for `promise`, but not longer than `ms`: then resolves, or rejects with `timedOut()` when given. */
async function bounded(promise: Promise<unknown>, ms: number, timedOut?: () => Error): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  promise.catch(() => undefined);
  try {
    await Promise.race([
      promise,
      new Promise<void>((resolve, reject) => (timer = setTimeout(() => (timedOut === undefined ? resolve() : reject(timedOut())), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
