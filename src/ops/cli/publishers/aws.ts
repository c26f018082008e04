import { definePublisher, loadPublisherModule, singleUrl, textFlag, type PublisherSettings } from './cli-publisher.js';

/** Region and endpoint as the CLI gives them; credentials always come from the SDK's default chain. */
function awsFlags(settings: PublisherSettings): { region?: string; endpoint?: string } {
  const region = textFlag(settings, 'aws-region');
  const endpoint = textFlag(settings, 'aws-endpoint');
  return { ...(region === undefined ? {} : { region }), ...(endpoint === undefined ? {} : { endpoint }) };
}

export const sqsPublisher = definePublisher({
  name: 'sqs',
  summary: 'Amazon SQS (tested on an emulator), standard or FIFO queue',
  peers: '@aws-sdk/client-sqs',
  brokerUrl: { protocols: ['https:', 'http:'] },
  flags: ['aws-region', 'aws-endpoint'],
  async create(settings, { logger, publishTimeoutMs }) {
    const { createSqsPublisher } = await loadPublisherModule(this, () => import('../../../brokers/sqs/index.js'));
    return createSqsPublisher({ queueUrl: singleUrl(settings, this.name), ...awsFlags(settings), publishTimeoutMs, logger });
  },
});

export const snsPublisher = definePublisher({
  name: 'sns',
  summary: 'Amazon SNS (tested on an emulator), standard or FIFO topic',
  peers: '@aws-sdk/client-sns',
  brokerUrl: { protocols: ['arn:'] },
  flags: ['aws-region', 'aws-endpoint'],
  async create(settings, { logger, publishTimeoutMs }) {
    const { createSnsPublisher } = await loadPublisherModule(this, () => import('../../../brokers/sns/index.js'));
    return createSnsPublisher({ topicArn: singleUrl(settings, this.name), ...awsFlags(settings), publishTimeoutMs, logger });
  },
});
