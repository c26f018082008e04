import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Publisher } from '../../src/core/ports.js';
import { createPubSubPublisher, PubSubAttributeNames, type PubSubPublisherOptions } from '../../src/brokers/pubsub/index.js';
import type { PublisherHarness, ReceivedMessage } from '../conformance/publisher-conformance.js';
import { freePort } from './nats-harness.js';
import { uniqueName } from './services.js';
import { waitFor } from './wait-for.js';

const run = promisify(execFile);

/** Google's Pub/Sub emulator, as .ci/services starts it (`gcloud beta emulators pubsub start`). */
export const pubsubEmulator = Object.freeze({
  host: process.env.OUTBOXER_TEST_PUBSUB_EMULATOR_HOST ?? '127.0.0.1:8085',
  projectId: process.env.OUTBOXER_TEST_PUBSUB_PROJECT ?? 'outboxer-test',
});

/** A message as the emulator's REST API hands it out (`projects.subscriptions.pull`). */
export interface PulledMessage {
  readonly data?: string;
  readonly attributes?: Record<string, string>;
  readonly messageId: string;
  readonly orderingKey?: string;
}

/**
 * Calls the emulator's REST API with curl, a client we did not write. `path` is under `/v1/projects/<project>/`
 * (`topics/<id>`, `subscriptions/<id>:pull`). Resolves with the JSON answer and the HTTP status.
 */
export async function pubsubRest(
  method: 'GET' | 'PUT' | 'POST' | 'DELETE',
  path: string,
  body?: unknown,
  projectId = pubsubEmulator.projectId,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const url = `http://${pubsubEmulator.host}/v1/projects/${projectId}/${path}`;
  const args = ['-s', '-X', method, '-H', 'content-type: application/json', '-w', '\n%{http_code}', '--max-time', '10'];
  if (body !== undefined) args.push('-d', JSON.stringify(body));
  const { stdout } = await run('curl', [...args, url], { maxBuffer: 64 * 1024 * 1024 });
  const cut = stdout.lastIndexOf('\n');
  const status = Number(stdout.slice(cut + 1));
  const text = stdout.slice(0, cut).trim();
  return { status, json: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

async function expectOk(
  method: 'PUT' | 'POST' | 'DELETE',
  path: string,
  body?: unknown,
  projectId = pubsubEmulator.projectId,
): Promise<Record<string, unknown>> {
  const { status, json } = await pubsubRest(method, path, body, projectId);
  if (status < 200 || status > 299) throw new Error(`emulator ${method} ${path}: HTTP ${status} ${JSON.stringify(json).slice(0, 300)}`);
  return json;
}

/** A topic id as a REST path segment (ids may hold `%`). */
const segment = (id: string): string => encodeURIComponent(id);

export const createTopic = (topicId: string, projectId = pubsubEmulator.projectId): Promise<unknown> =>
  expectOk('PUT', `topics/${segment(topicId)}`, undefined, projectId);
export const deleteTopic = (topicId: string, projectId = pubsubEmulator.projectId): Promise<unknown> =>
  expectOk('DELETE', `topics/${segment(topicId)}`, undefined, projectId);

/** A subscription of the topic with message ordering on (delivery in order per ordering key). */
export function createSubscription(subscription: string, topicId: string, projectId = pubsubEmulator.projectId): Promise<unknown> {
  const topic = `projects/${projectId}/topics/${topicId}`;
  return expectOk('PUT', `subscriptions/${segment(subscription)}`, { topic, enableMessageOrdering: true, ackDeadlineSeconds: 10 }, projectId);
}

/** Pulls what the subscription holds now and acknowledges it (so the next of each ordering key comes). */
export async function pullOnce(subscription: string, projectId = pubsubEmulator.projectId): Promise<PulledMessage[]> {
  const answer = await expectOk('POST', `subscriptions/${segment(subscription)}:pull`, { maxMessages: 1000, returnImmediately: true }, projectId);
  const received = (answer.receivedMessages ?? []) as { ackId: string; message: PulledMessage }[];
  if (received.length > 0) await expectOk('POST', `subscriptions/${segment(subscription)}:acknowledge`, { ackIds: received.map((r) => r.ackId) }, projectId);
  return received.map((r) => r.message);
}

/** The outbox topic a topic id stands for: the prefix removed, `%3A` and `%2F` decoded (docs/publishers/pubsub.md). */
export function outboxTopicOf(topicId: string, prefix = ''): string {
  return topicId.slice(prefix.length).replaceAll('%3A', ':').replaceAll('%2F', '/');
}

/** A pulled message as a consumer in any language reads it. */
export function toReceived(message: PulledMessage, topic: string): ReceivedMessage {
  const attributes = message.attributes ?? {};
  const bytes = Buffer.from(message.data ?? '', 'base64');
  return {
    id: attributes[PubSubAttributeNames.id] ?? '',
    topic,
    type: attributes[PubSubAttributeNames.type] ?? '',
    key: attributes[PubSubAttributeNames.key] ?? null,
    headers: attributes,
    body: bytes.toString('utf8'),
    bytes: new Uint8Array(bytes),
    contentType: attributes[PubSubAttributeNames.contentType],
  };
}

/** A topic and its subscription, unique to one test, that a reader drains through REST. */
export interface IsolatedTopic {
  /** The outbox topic (with no topicPrefix, also the Pub/Sub topic id). */
  readonly topic: string;
  readonly subscription: string;
  /** Every message pulled so far, in pull order. */
  readonly pulled: PulledMessage[];
  /** Pulls until at least `count` messages arrived (all of them so far), or fails after `timeoutMs`. */
  waitForPulled(count: number, timeoutMs?: number): Promise<PulledMessage[]>;
  cleanup(): Promise<void>;
}

export async function isolatedTopic(topicId = uniqueName('ps'), projectId = pubsubEmulator.projectId): Promise<IsolatedTopic> {
  const subscription = uniqueName('sub');
  await createTopic(topicId, projectId);
  await createSubscription(subscription, topicId, projectId);
  const pulled: PulledMessage[] = [];
  return {
    topic: topicId,
    subscription,
    pulled,
    async waitForPulled(count, timeoutMs = 10_000) {
      await waitFor(
        async () => {
          pulled.push(...(await pullOnce(subscription, projectId)));
          return pulled.length >= count;
        },
        { timeoutMs, what: `${count} messages on subscription ${subscription} (got ${pulled.length})` },
      );
      return [...pulled];
    },
    async cleanup() {
      await expectOk('DELETE', `subscriptions/${segment(subscription)}`, undefined, projectId);
      await deleteTopic(topicId, projectId);
    },
  };
}

/** Publisher options pointed at the emulator, with test timeouts. */
export function emulatorOptions(overrides: Partial<PubSubPublisherOptions> = {}): PubSubPublisherOptions {
  return { projectId: pubsubEmulator.projectId, apiEndpoint: pubsubEmulator.host, publishTimeoutMs: 5000, ...overrides };
}

/** Publishers made in a test, closed in its cleanup. */
export function pubsubPublisherPool(): { make(overrides?: Partial<PubSubPublisherOptions>): Publisher; closeAll(): Promise<void> } {
  const made: Publisher[] = [];
  return {
    make(overrides = {}) {
      const publisher = createPubSubPublisher(emulatorOptions(overrides));
      made.push(publisher);
      return publisher;
    },
    async closeAll() {
      await Promise.all(made.splice(0).map((p) => p.close()));
    },
  };
}

export const pubsubHarness: PublisherHarness = {
  name: 'Google Cloud Pub/Sub (emulator)',
  async setup() {
    const topic = await isolatedTopic();
    const publisher = createPubSubPublisher(emulatorOptions());
    return {
      publisher,
      // One Pub/Sub topic per test: Pub/Sub topics are created ahead, and the suite reads one subscription.
      topic: () => topic.topic,
      unroutableTopic: uniqueName('nosuchtopic'),
      waitForMessages: async (count, timeoutMs) => (await topic.waitForPulled(count, timeoutMs)).map((m) => toReceived(m, topic.topic)),
      async cleanup() {
        await publisher.close();
        await topic.cleanup();
      },
    };
  },
  async unreachable(secret) {
    const port = await freePort();
    return createPubSubPublisher({
      projectId: pubsubEmulator.projectId,
      apiEndpoint: `127.0.0.1:${port}`,
      publishTimeoutMs: 2000,
      // eslint-disable-next-line @typescript-eslint/no-deprecated -- a service-account credential on purpose: it must never be logged
      clientConfig: { credentials: { client_email: 'relay@outboxer-test.iam.gserviceaccount.com', private_key: secret } },
    });
  },
};
