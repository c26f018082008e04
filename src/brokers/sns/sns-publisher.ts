import { GetTopicAttributesCommand, ListTopicsCommand, PublishBatchCommand, SNSClient, type SNSClientConfig } from '@aws-sdk/client-sns';
import type { Publisher } from '../../core/ports.js';
import { createAwsBatchPublisher } from '../aws/batch-publisher.js';
import { isFifoName } from '../aws/wire.js';
import { resolveSnsPublisherOptions, type ResolvedSnsPublisherOptions, type SnsPublisherOptions } from './options.js';
import { toSnsEntry, topicArnFor } from './wire.js';

/** The SDK client of the options: the SDK's chains for what they leave out, bounded connects and requests. */
export function snsClientConfig(options: ResolvedSnsPublisherOptions): SNSClientConfig {
  const config: SNSClientConfig = {
    requestHandler: { connectionTimeout: options.connectTimeoutMs, requestTimeout: options.publishTimeoutMs, throwOnRequestTimeout: true },
  };
  if (options.region !== undefined) config.region = options.region;
  if (options.endpoint !== undefined) config.endpoint = options.endpoint;
  const { credentials } = options;
  // A copy: the SDK writes into the object it is given, which may be frozen.
  if (credentials !== undefined) config.credentials = typeof credentials === 'function' ? credentials : { ...credentials };
  return config;
}

/**
 * Publishes to Amazon SNS with PublishBatch: the outbox topic picks the SNS topic (`routes`, `topicArn`,
 * `topicArnPrefix` or `resolveTopicArn`), the message is the stored body (base64 for binary bodies), and id,
 * type, key, content type and headers travel as message attributes (docs/publishers/sns.md). Concurrent
 * publishes to one topic share a request of up to 10 entries; each publish resolves only once SNS lists its own
 * entry as Successful. On a FIFO topic (`.fifo`) MessageGroupId is the key and MessageDeduplicationId the outbox id.
 */
export function createSnsPublisher(input: SnsPublisherOptions): Publisher {
  const options = resolveSnsPublisherOptions(input);
  const client = new SNSClient(snsClientConfig(options));
  return createAwsBatchPublisher(
    {
      name: 'sns',
      service: 'SNS',
      kind: 'topic',
      destinationOf: (message) => topicArnFor(message, options),
      isFifo: (topicArn) => isFifoName(topicArn),
      request: (topicArn, entries, abortSignal) =>
        client.send(new PublishBatchCommand({ TopicArn: topicArn, PublishBatchRequestEntries: entries.map(toSnsEntry) }), { abortSignal }),
      probeTarget: options.topicArn ?? 'ListTopics',
      async probe(abortSignal) {
        if (options.topicArn !== undefined) await client.send(new GetTopicAttributesCommand({ TopicArn: options.topicArn }), { abortSignal });
        else await client.send(new ListTopicsCommand({}), { abortSignal });
      },
      destroy: () => client.destroy(),
    },
    options,
  );
}
