import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import type { Publisher } from '../../src/core/ports.js';
import { createWebhookPublisher, decodeHeaderValue, type WebhookPublisherOptions } from '../../src/brokers/webhook/index.js';
import type { PublisherHarness, ReceivedMessage } from '../conformance/publisher-conformance.js';
import { uniqueName } from './services.js';
import { waitFor } from './wait-for.js';

/** A fresh Standard Webhooks secret: `whsec_` and the base64 of 32 random bytes. */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** A TCP port nothing listens on (taken from the OS, then released). */
export async function closedPort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

export interface Answer {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** Decides the answer to each request; may take its time (a promise) to play a slow receiver. */
export type Responder = (request: RecordedRequest) => Answer | Promise<Answer>;

/** A real HTTP server on 127.0.0.1 and a port of its own that records every request it gets, in arrival order. */
export class WebhookReceiver {
  readonly requests: RecordedRequest[] = [];
  respond: Responder;
  /** Requests read and not yet answered, now and at most so far. */
  inFlight = 0;
  maxInFlight = 0;
  readonly #server: Server;

  private constructor(server: Server, respond: Responder) {
    this.#server = server;
    this.respond = respond;
  }

  /** Listens on `port` (0: any free one; a fixed one to bring back an endpoint that was down). */
  static async start(respond: Responder = () => ({ status: 204 }), port = 0): Promise<WebhookReceiver> {
    const server = createServer();
    const receiver = new WebhookReceiver(server, respond);
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const recorded = { method: request.method ?? '', path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks) };
        receiver.requests.push(recorded);
        receiver.inFlight++;
        receiver.maxInFlight = Math.max(receiver.maxInFlight, receiver.inFlight);
        Promise.resolve()
          .then(() => receiver.respond(recorded))
          .then(
            (answer) => response.writeHead(answer.status, answer.headers).end(answer.body),
            () => response.writeHead(500).end(),
          )
          .finally(() => receiver.inFlight--);
      });
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return receiver;
  }

  get origin(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  url(path = '/outbox'): string {
    return `${this.origin}${path}`;
  }

  /** The POSTs received so far, once there are at least `count`. */
  async waitForRequests(count: number, timeoutMs = 10_000): Promise<RecordedRequest[]> {
    return waitFor(() => (this.requests.length >= count ? [...this.requests] : undefined), { timeoutMs, what: `${count} requests at ${this.origin}` });
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** A request as a receiver in any language reads it: ids and type from headers, values percent-decoded. */
export function receivedMessage(request: RecordedRequest): ReceivedMessage {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string') headers[name] = decodeHeaderValue(value);
  return {
    id: header(request.headers, 'webhook-id') ?? '',
    topic: header(request.headers, 'outbox-topic') ?? '',
    type: headers['outbox-type'] ?? '',
    key: headers['outbox-key'] ?? null,
    headers,
    body: request.body.toString('utf8'),
    bytes: new Uint8Array(request.body),
    contentType: header(request.headers, 'content-type'),
  };
}

/** Publishers made in a test, closed in its cleanup. */
export function webhookPublishers(): { make(options: WebhookPublisherOptions): Publisher; closeAll(): Promise<void> } {
  const made: Publisher[] = [];
  return {
    make(options) {
      const publisher = createWebhookPublisher(options);
      made.push(publisher);
      return publisher;
    },
    async closeAll() {
      await Promise.all(made.splice(0).map((publisher) => publisher.close()));
    },
  };
}

export const webhookHarness: PublisherHarness = {
  name: 'webhook',
  async setup() {
    const receiver = await WebhookReceiver.start();
    const prefix = uniqueName('p');
    // Only this test's topics have a route and there is no default url: any other topic is unroutable.
    const publisher = createWebhookPublisher({ routes: [{ topic: `${prefix}.#`, url: receiver.url() }], secret: newSecret(), publishTimeoutMs: 5000 });
    return {
      publisher,
      topic: (suffix) => `${prefix}.${suffix}`,
      unroutableTopic: `${uniqueName('nowhere')}.x`,
      waitForMessages: async (count, timeoutMs) => (await receiver.waitForRequests(count, timeoutMs)).map(receivedMessage),
      async cleanup() {
        await publisher.close();
        await receiver.close();
      },
    };
  },
  async unreachable(secret) {
    const port = await closedPort();
    return createWebhookPublisher({
      url: `http://relay:${secret}@127.0.0.1:${port}/outbox`,
      secret: newSecret(),
      headers: { 'x-api-key': secret },
      publishTimeoutMs: 2000,
    });
  },
};

/** A slow receiver whose pace the test sets: every request waits for `releaseOne()` or `open()`, then gets `answer`. */
export class Gate {
  readonly #waiting: (() => void)[] = [];
  #open = false;

  constructor(readonly answer: Answer = { status: 204 }) {}

  readonly responder: Responder = () => (this.#open ? this.answer : new Promise<Answer>((resolve) => this.#waiting.push(() => resolve(this.answer))));

  get held(): number {
    return this.#waiting.length;
  }

  releaseOne(): void {
    this.#waiting.shift()?.();
  }

  /** Answers every held request and every later one at once. */
  open(): void {
    this.#open = true;
    for (const release of this.#waiting.splice(0)) release();
  }
}
