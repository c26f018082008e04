import type { SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import { PublishError } from '../../core/errors.js';
import type { OutboxMessage } from '../../core/message.js';
import type { BatchRequestEntry } from '../aws/batch-publisher.js';
import { isQueueUrl, type ResolvedSqsPublisherOptions } from './options.js';

export { OutboxAwsAttributes as SqsAttributeNames } from '../aws/wire.js';

/** One entry of SendMessageBatch: body, attributes, and on a FIFO queue MessageGroupId and MessageDeduplicationId. */
export function toSqsEntry({ entryId, wire }: BatchRequestEntry): SendMessageBatchRequestEntry {
  const entry: SendMessageBatchRequestEntry = { Id: entryId, MessageBody: wire.body, MessageAttributes: { ...wire.attributes } };
  if (wire.groupId !== undefined) entry.MessageGroupId = wire.groupId;
  if (wire.deduplicationId !== undefined) entry.MessageDeduplicationId = wire.deduplicationId;
  return entry;
}

function unroutable(message: OutboxMessage, why: string): PublishError {
  return new PublishError('OUTBOXER_UNROUTABLE', `message ${message.id} on topic "${message.topic}" has no SQS queue: ${why}`);
}

/**
 * The queue of a message: `routes[topic]`, else `queueUrl`, else `${queueUrlPrefix}${topic}`, else
 * `resolveQueueUrl(topic)`. No queue is OUTBOXER_UNROUTABLE (the relay pauses the topic until it has one).
 */
export function queueUrlFor(message: OutboxMessage, options: ResolvedSqsPublisherOptions): string {
  const { topic } = message;
  const routed = Object.hasOwn(options.routes, topic) ? options.routes[topic] : undefined;
  if (routed !== undefined) return routed;
  if (options.queueUrl !== undefined) return options.queueUrl;
  if (options.queueUrlPrefix !== undefined) {
    const url = `${options.queueUrlPrefix}${topic}`;
    if (!isQueueUrl(url)) {
      throw new PublishError(
        'OUTBOXER_INVALID_TOPIC',
        `message ${message.id}: topic "${topic}" does not make a queue name after queueUrlPrefix (letters, digits, - and _, a .fifo suffix, at most 80 characters); route it with routes or resolveQueueUrl`,
        { permanent: true },
      );
    }
    return url;
  }
  if (options.resolveQueueUrl === undefined) throw unroutable(message, 'it is not in routes; add it there');
  let resolved: string | undefined;
  try {
    resolved = options.resolveQueueUrl(topic);
  } catch {
    throw unroutable(message, 'resolveQueueUrl threw; fix the function');
  }
  if (resolved === undefined) throw unroutable(message, 'resolveQueueUrl returned undefined; add a queue for it');
  if (typeof resolved !== 'string' || !isQueueUrl(resolved))
    throw unroutable(message, 'resolveQueueUrl returned something that is not a queue URL; fix the function');
  return resolved;
}
