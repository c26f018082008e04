import { OutboxerError, PublishError } from '../../core/errors.js';
import { bodyBytes, type OutboxMessage } from '../../core/message.js';
import type { Publisher, PublisherCapabilities } from '../../core/ports.js';
import type { BrokerConnectionState } from '../../core/relay-health.js';
import type { WebhookEndpoint } from './endpoint.js';
import { answerError, requestError, timeoutError, type AttemptContext } from './errors.js';
import { HttpPools, type HttpAnswer } from './http-request.js';
import { OriginSlots } from './origin-slots.js';
import { resolveWebhookPublisherOptions, type ResolvedWebhookPublisherOptions, type WebhookPublisherOptions } from './options.js';
import { requestHeaders, signedHeaders } from './wire.js';

/** Marks an abort by our own deadline (as opposed to a driver error). */
class Deadline extends Error {}

/** The endpoint of a topic: the first route that matches, else the default url, else none. */
export function endpointFor(options: ResolvedWebhookPublisherOptions, topic: string): WebhookEndpoint | undefined {
  return options.routes.find((route) => route.topic.matches(topic))?.endpoint ?? options.defaultEndpoint;
}

/**
 * Publishes each message as one HTTP POST signed as Standard Webhooks specify (https://www.standardwebhooks.com):
 * body = the stored bytes, `webhook-id` = the message id. `publish` resolves only on a 2xx answer (the receiver
 * stored it) and rejects with a PublishError otherwise, within `publishTimeoutMs`. Redirects are not followed.
 * At most `maxConcurrencyPerEndpoint` requests are in flight per origin; connections are kept alive.
 */
export function createWebhookPublisher(input: WebhookPublisherOptions): Publisher {
  const options = resolveWebhookPublisherOptions(input);
  const { logger, publishTimeoutMs, signingKeys, secrets } = options;
  const pools = new HttpPools();
  const slots = new OriginSlots(options.maxConcurrencyPerEndpoint);
  const inFlight = new Set<Promise<unknown>>();
  const capabilities: PublisherCapabilities = Object.freeze(options.maxMessageBytes === undefined ? {} : { maxMessageBytes: options.maxMessageBytes });
  let state: BrokerConnectionState = 'connecting';
  let closed = false;
  let closing: Promise<void> | undefined;

  const closedError = (): PublishError => new PublishError('OUTBOXER_CLOSED', 'the webhook publisher is closed');

  /** Runs `work` under a deadline of `publishTimeoutMs`: its signal aborts with a Deadline when the time is up. */
  async function withDeadline<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Deadline()), publishTimeoutMs);
    try {
      return await work(controller.signal);
    } finally {
      clearTimeout(timer);
    }
  }

  /** One request to `endpoint` within a slot of its origin; answers and failures update the connection state. */
  async function exchange(
    context: AttemptContext,
    method: 'POST' | 'HEAD' | 'OPTIONS',
    headers: () => Record<string, string>,
    body: Buffer | undefined,
  ): Promise<HttpAnswer> {
    const { endpoint } = context;
    return withDeadline(async (signal) => {
      let release: () => void;
      try {
        release = await slots.acquire(endpoint.origin, signal);
      } catch (error) {
        throw error instanceof Deadline ? timeoutError(context, false) : error;
      }
      try {
        const answer = await pools.send(endpoint, method, headers(), body, signal);
        state = 'connected';
        return answer;
      } catch (error) {
        if (error instanceof Deadline) throw timeoutError(context, true);
        const failure = requestError(error, context);
        if (failure.code === 'OUTBOXER_BROKER_UNAVAILABLE') state = 'disconnected';
        throw failure;
      } finally {
        release();
      }
    });
  }

  async function send(message: OutboxMessage): Promise<void> {
    const endpoint = endpointFor(options, message.topic);
    if (endpoint === undefined) {
      throw new PublishError(
        'OUTBOXER_UNROUTABLE',
        `no route matches topic "${message.topic}" of message ${message.id}, and no default url is set: add a route for it (or set url), and the topic resumes`,
      );
    }
    const body = bodyBytes(message.body);
    if (options.maxMessageBytes !== undefined && body.length > options.maxMessageBytes) {
      throw new PublishError(
        'OUTBOXER_MESSAGE_TOO_LARGE_FOR_BROKER',
        `message ${message.id} is ${body.length} bytes, over the maxMessageBytes option of ${options.maxMessageBytes}; lower maxPayloadBytes at enqueue or raise the option`,
        { permanent: true },
      );
    }
    const unsigned = requestHeaders(message, options.headers, body);
    const context: AttemptContext = { id: message.id, endpoint, timeoutMs: publishTimeoutMs, maxRetryAfterMs: options.maxRetryAfterMs, secrets };
    // signed when the request leaves, not when it starts waiting for a slot: the timestamp is this attempt's
    const answer = await exchange(context, 'POST', () => signedHeaders(unsigned, signingKeys, message.id, body), body);
    const failure = answerError(answer.status, answer.headers, context);
    if (failure !== undefined) throw failure;
  }

  /** The optional probe of `verify()`: any HTTP answer proves the endpoint is there, but a refusal of this sender. */
  async function probe(endpoint: WebhookEndpoint, method: 'HEAD' | 'OPTIONS'): Promise<void> {
    const context: AttemptContext = { id: `(${method} probe)`, endpoint, timeoutMs: publishTimeoutMs, maxRetryAfterMs: options.maxRetryAfterMs, secrets };
    const answer = await exchange(context, method, () => ({ ...options.headers, 'user-agent': options.headers['user-agent'] ?? 'outboxer' }), undefined);
    const refusal = answer.status === 401 || answer.status === 403 ? answerError(answer.status, answer.headers, context) : undefined;
    if (refusal !== undefined) throw refusal;
  }

  return {
    name: 'webhook',
    capabilities,
    async publish(message: OutboxMessage): Promise<void> {
      if (closed) throw closedError();
      const publishing = send(message);
      inFlight.add(publishing);
      try {
        await publishing;
      } catch (error) {
        if (error instanceof OutboxerError) logger.debug({ id: message.id, code: error.code }, 'webhook: publish failed');
        throw error;
      } finally {
        inFlight.delete(publishing);
      }
    },
    async verify(): Promise<void> {
      if (closed) throw closedError();
      const method = options.verifyProbe;
      if (method === undefined) {
        // Nothing to connect to ahead of a request: ready, as far as anyone can know without sending one. Left
        // `connecting`, the relay would take an idle publisher for one whose broker never answers.
        if (state === 'connecting') state = 'connected';
        return;
      }
      const endpoints = new Map<string, WebhookEndpoint>();
      for (const endpoint of [options.defaultEndpoint, ...options.routes.map((route) => route.endpoint)]) {
        if (endpoint !== undefined) endpoints.set(endpoint.href, endpoint);
      }
      await Promise.all([...endpoints.values()].map((endpoint) => probe(endpoint, method)));
    },
    connectionState: () => (closed ? 'disconnected' : state),
    close(): Promise<void> {
      if (closing !== undefined) return closing;
      closed = true;
      closing = (async () => {
        await Promise.allSettled([...inFlight]); // each bounded by publishTimeoutMs
        pools.destroy();
        logger.info({}, 'webhook publisher closed');
      })();
      return closing;
    },
  };
}
