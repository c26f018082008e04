import { GetQueueAttributesCommand, ListQueuesCommand, SendMessageBatchCommand, SQSClient, type SQSClientConfig } from '@aws-sdk/client-sqs';
import type { Publisher } from '../../core/ports.js';
import { createAwsBatchPublisher } from '../aws/batch-publisher.js';
import { isFifoName } from '../aws/wire.js';
import { resolveSqsPublisherOptions, type ResolvedSqsPublisherOptions, type SqsPublisherOptions } from './options.js';
import { queueUrlFor, toSqsEntry } from './wire.js';

/** The SDK client of the options: the SDK's chains for what they leave out, bounded connects and requests. */
export function sqsClientConfig(options: ResolvedSqsPublisherOptions): SQSClientConfig {
  const config: SQSClientConfig = {
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
 * Publishes to Amazon SQS with SendMessageBatch: the topic picks the queue (`routes`, `queueUrl`,
 * `queueUrlPrefix` or `resolveQueueUrl`), the body is the stored body (base64 for binary bodies), and id,
 * type, key, content type and headers travel as message attributes (docs/publishers/sqs.md). Concurrent
 * publishes to one queue share a request of up to 10 entries; each publish resolves only once SQS lists its
 * own entry as Successful, that is stored. On a FIFO queue (`.fifo`) MessageGroupId is the key and
 * MessageDeduplicationId the outbox id.
 */
export function createSqsPublisher(input: SqsPublisherOptions): Publisher {
  const options = resolveSqsPublisherOptions(input);
  const client = new SQSClient(sqsClientConfig(options));
  return createAwsBatchPublisher(
    {
      name: 'sqs',
      service: 'SQS',
      kind: 'queue',
      destinationOf: (message) => queueUrlFor(message, options),
      isFifo: (queueUrl) => isFifoName(queueUrl),
      request: (queueUrl, entries, abortSignal) =>
        client.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries.map(toSqsEntry) }), { abortSignal }),
      probeTarget: options.queueUrl ?? 'ListQueues',
      async probe(abortSignal) {
        if (options.queueUrl !== undefined)
          await client.send(new GetQueueAttributesCommand({ QueueUrl: options.queueUrl, AttributeNames: ['QueueArn'] }), { abortSignal });
        else await client.send(new ListQueuesCommand({ MaxResults: 1 }), { abortSignal });
      },
      destroy: () => client.destroy(),
    },
    options,
  );
}
