import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { createServer } from 'node:net';
import { buildApp } from 'fauxqs';
import { afterAll, beforeAll } from 'vitest';
import type { Publisher } from '../../src/core/ports.js';
import { createSqsPublisher, SqsAttributeNames, type SqsPublisherOptions } from '../../src/brokers/sqs/index.js';
import type { PublisherHarness, ReceivedMessage } from '../conformance/publisher-conformance.js';
import { uniqueName } from './services.js';
import { waitFor } from './wait-for.js';

/** fauxqs accepts any credentials; these are what the tests sign with. */
export const EMULATOR_CREDENTIALS = { accessKeyId: 'test', secretAccessKey: 'test' } as const;
export const EMULATOR_REGION = 'us-east-1';

/** One request the emulator answered: its action and, for a batch, how many entries it carried. */
export interface EmulatorRequest {
  readonly action: string;
  readonly entries: number;
}

/** A fauxqs server in this process, on 127.0.0.1 and a port of its own. */
export interface Fauxqs {
  readonly endpoint: string;
  /** Every SQS and SNS request so far, oldest first (to see how publishes were batched). */
  readonly requests: EmulatorRequest[];
  close(): Promise<void>;
}

function describeRequest(headers: Record<string, unknown>, body: unknown): EmulatorRequest {
  const target = headers['x-amz-target'];
  if (typeof target === 'string') {
    const entries = (body as { Entries?: unknown[] } | null)?.Entries;
    return { action: target.replace(/^AmazonSQS\./, ''), entries: Array.isArray(entries) ? entries.length : 0 };
  }
  const form = (body ?? {}) as Record<string, unknown>;
  const ids = Object.keys(form).filter((name) => /^PublishBatchRequestEntries\.member\.\d+\.Id$/.test(name));
  return { action: typeof form.Action === 'string' ? form.Action : 'unknown', entries: ids.length };
}

export async function startFauxqs(): Promise<Fauxqs> {
  const app = buildApp({ logger: false });
  const requests: EmulatorRequest[] = [];
  app.addHook('preHandler', async (request) => {
    requests.push(describeRequest(request.headers, request.body));
  });
  const endpoint = await app.listen({ port: 0, host: '127.0.0.1' });
  return { endpoint, requests, close: () => app.close() };
}

/** Starts fauxqs before the file's tests and stops it after them; the accessor is valid inside tests and hooks. */
export function useFauxqs(): () => Fauxqs {
  let server: Fauxqs | undefined;
  beforeAll(async () => {
    server = await startFauxqs();
  });
  afterAll(async () => {
    await server?.close();
  });
  return () => {
    if (server === undefined) throw new Error('fauxqs is not started: call useFauxqs() at the top of a describe block');
    return server;
  };
}

export function sqsAdmin(endpoint: string): SQSClient {
  return new SQSClient({ endpoint, region: EMULATOR_REGION, credentials: { ...EMULATOR_CREDENTIALS } });
}

/** Creates a queue of its own (`.fifo` names make FIFO queues) and returns its URL and ARN. */
export async function createQueue(admin: SQSClient, name: string, attributes: Record<string, string> = {}): Promise<{ url: string; arn: string }> {
  const fifo = name.endsWith('.fifo') ? { FifoQueue: 'true' } : {};
  const { QueueUrl } = await admin.send(new CreateQueueCommand({ QueueName: name, Attributes: { ...fifo, ...attributes } }));
  if (QueueUrl === undefined) throw new Error(`no URL for queue ${name}`);
  const { Attributes } = await admin.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
  return { url: QueueUrl, arn: Attributes?.QueueArn ?? '' };
}

/** A message as a consumer reads it with the AWS SDK, decoded as docs/publishers/sqs.md says. */
export function fromSqsMessage(message: Message): ReceivedMessage {
  const attribute = (name: string): string | undefined => message.MessageAttributes?.[name]?.StringValue;
  const body = message.Body ?? '';
  const bytes = attribute(SqsAttributeNames.bodyEncoding) === 'base64' ? Buffer.from(body, 'base64') : Buffer.from(body, 'utf8');
  const headers = attribute(SqsAttributeNames.headers);
  return {
    id: attribute(SqsAttributeNames.id) ?? '',
    topic: attribute(SqsAttributeNames.topic) ?? '',
    type: attribute(SqsAttributeNames.type) ?? '',
    key: attribute(SqsAttributeNames.key) ?? null,
    headers: headers === undefined ? {} : (JSON.parse(headers) as Record<string, string>),
    body: bytes.toString('utf8'),
    bytes: new Uint8Array(bytes),
    contentType: attribute(SqsAttributeNames.contentType),
  };
}

/** Receives (and deletes) until the queue gave at least `count` messages in all; returns all of them, raw. */
export function queueReader(admin: SQSClient, queueUrl: string): (count: number, timeoutMs?: number) => Promise<Message[]> {
  const received: Message[] = [];
  return async (count, timeoutMs = 10_000) => {
    await waitFor(
      async () => {
        const { Messages = [] } = await admin.send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: 1,
            MessageAttributeNames: ['All'],
            MessageSystemAttributeNames: ['All'],
          }),
        );
        received.push(...Messages);
        if (Messages.length > 0) {
          const Entries = Messages.map((message, index) => ({ Id: `d${index}`, ReceiptHandle: message.ReceiptHandle ?? '' }));
          await admin.send(new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries }));
        }
        return received.length >= count;
      },
      { timeoutMs, what: `${count} messages in ${queueUrl} (got ${received.length})` },
    );
    return [...received];
  };
}

/** The options every test publisher starts from: the emulator, its region and credentials. */
export function emulatorOptions(endpoint: string): Pick<SqsPublisherOptions, 'endpoint' | 'region' | 'credentials' | 'publishTimeoutMs' | 'connectTimeoutMs'> {
  return { endpoint, region: EMULATOR_REGION, credentials: EMULATOR_CREDENTIALS, publishTimeoutMs: 5000, connectTimeoutMs: 1000 };
}

/** A TCP port nothing listens on (taken from the OS, then released). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** An endpoint where nothing listens, and a queue URL on it. */
export async function unreachableEndpoint(): Promise<{ endpoint: string; queueUrl: string }> {
  const endpoint = `http://127.0.0.1:${await freePort()}`;
  return { endpoint, queueUrl: `${endpoint}/000000000000/nowhere` };
}

export function sqsHarness(fauxqs: () => Fauxqs): PublisherHarness {
  return {
    name: 'Amazon SQS (fauxqs)',
    async setup() {
      const { endpoint } = fauxqs();
      const admin = sqsAdmin(endpoint);
      const queue = await createQueue(admin, uniqueName('q'));
      const prefix = uniqueName('t');
      const unroutableTopic = `${prefix}.missing`;
      const missingQueue = queue.url.replace(/[^/]+$/, uniqueName('absent'));
      const publisher: Publisher = createSqsPublisher({ ...emulatorOptions(endpoint), queueUrl: queue.url, routes: { [unroutableTopic]: missingQueue } });
      const read = queueReader(admin, queue.url);
      return {
        publisher,
        topic: (suffix) => `${prefix}.${suffix}`,
        unroutableTopic,
        waitForMessages: async (count, timeoutMs) => (await read(count, timeoutMs)).map(fromSqsMessage),
        async cleanup() {
          await publisher.close();
          await admin.send(new DeleteQueueCommand({ QueueUrl: queue.url }));
          admin.destroy();
        },
      };
    },
    async unreachable(secret) {
      const { endpoint, queueUrl } = await unreachableEndpoint();
      return createSqsPublisher({
        endpoint,
        region: EMULATOR_REGION,
        credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: secret },
        queueUrl,
        publishTimeoutMs: 3000,
        connectTimeoutMs: 500,
      });
    },
  };
}
