import { CreateTopicCommand, DeleteTopicCommand, SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import { DeleteQueueCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import type { Publisher } from '../../src/core/ports.js';
import { createSnsPublisher } from '../../src/brokers/sns/index.js';
import type { PublisherHarness } from '../conformance/publisher-conformance.js';
import {
  createQueue,
  EMULATOR_CREDENTIALS,
  EMULATOR_REGION,
  emulatorOptions,
  type Fauxqs,
  fromSqsMessage,
  queueReader,
  sqsAdmin,
  unreachableEndpoint,
} from './sqs-harness.js';
import { uniqueName } from './services.js';

export function snsAdmin(endpoint: string): SNSClient {
  return new SNSClient({ endpoint, region: EMULATOR_REGION, credentials: { ...EMULATOR_CREDENTIALS } });
}

/** An SNS topic with one SQS queue subscribed to it (raw delivery unless `raw` is false), and a reader of that queue. */
export interface SubscribedTopic {
  readonly topicArn: string;
  readonly queueUrl: string;
  /** Receives with the AWS SDK until the queue gave at least `count` messages; returns all, raw. */
  read(count: number, timeoutMs?: number): Promise<Message[]>;
  delete(): Promise<void>;
}

export async function subscribedTopic(
  endpoint: string,
  options: { name?: string; raw?: boolean; attributes?: Record<string, string> } = {},
): Promise<SubscribedTopic> {
  const sns = snsAdmin(endpoint);
  const sqs: SQSClient = sqsAdmin(endpoint);
  const name = options.name ?? uniqueName('topic');
  const fifo = name.endsWith('.fifo');
  const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: name, Attributes: { ...(fifo ? { FifoTopic: 'true' } : {}), ...options.attributes } }));
  if (TopicArn === undefined) throw new Error(`no ARN for topic ${name}`);
  const queue = await createQueue(sqs, fifo ? `${uniqueName('sub')}.fifo` : uniqueName('sub'));
  await sns.send(
    new SubscribeCommand({ TopicArn, Protocol: 'sqs', Endpoint: queue.arn, Attributes: { RawMessageDelivery: options.raw === false ? 'false' : 'true' } }),
  );
  return {
    topicArn: TopicArn,
    queueUrl: queue.url,
    read: queueReader(sqs, queue.url),
    async delete() {
      await sns.send(new DeleteTopicCommand({ TopicArn }));
      await sqs.send(new DeleteQueueCommand({ QueueUrl: queue.url }));
      sns.destroy();
      sqs.destroy();
    },
  };
}

export function snsHarness(fauxqs: () => Fauxqs): PublisherHarness {
  return {
    name: 'Amazon SNS (fauxqs, raw delivery to SQS)',
    async setup() {
      const { endpoint } = fauxqs();
      const topic = await subscribedTopic(endpoint);
      const prefix = uniqueName('t');
      const unroutableTopic = `${prefix}.missing`;
      const missingTopic = topic.topicArn.replace(/[^:]+$/, uniqueName('absent'));
      const publisher: Publisher = createSnsPublisher({ ...emulatorOptions(endpoint), topicArn: topic.topicArn, routes: { [unroutableTopic]: missingTopic } });
      return {
        publisher,
        topic: (suffix) => `${prefix}.${suffix}`,
        unroutableTopic,
        waitForMessages: async (count, timeoutMs) => (await topic.read(count, timeoutMs)).map(fromSqsMessage),
        async cleanup() {
          await publisher.close();
          await topic.delete();
        },
      };
    },
    async unreachable(secret) {
      const { endpoint } = await unreachableEndpoint();
      return createSnsPublisher({
        endpoint,
        region: EMULATOR_REGION,
        credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: secret },
        topicArn: 'arn:aws:sns:us-east-1:000000000000:nowhere',
        publishTimeoutMs: 3000,
        connectTimeoutMs: 500,
      });
    },
  };
}
