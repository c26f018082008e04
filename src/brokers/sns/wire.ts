import type { PublishBatchRequestEntry } from '@aws-sdk/client-sns';
import { PublishError } from '../../core/errors.js';
import type { OutboxMessage } from '../../core/message.js';
import type { BatchRequestEntry } from '../aws/batch-publisher.js';
import { isTopicArn, type ResolvedSnsPublisherOptions } from './options.js';

export { OutboxAwsAttributes as SnsAttributeNames } from '../aws/wire.js';

/** One entry of PublishBatch: message, attributes, and on a FIFO topic MessageGroupId and MessageDeduplicationId. */
export function toSnsEntry({ entryId, wire }: BatchRequestEntry): PublishBatchRequestEntry {
  const entry: PublishBatchRequestEntry = { Id: entryId, Message: wire.body, MessageAttributes: { ...wire.attributes } };
  if (wire.groupId !== undefined) entry.MessageGroupId = wire.groupId;
  if (wire.deduplicationId !== undefined) entry.MessageDeduplicationId = wire.deduplicationId;
  return entry;
}

function unroutable(message: OutboxMessage, why: string): PublishError {
  return new PublishError('OUTBOXER_UNROUTABLE', `message ${message.id} on topic "${message.topic}" has no SNS topic: ${why}`);
}

/**
 * The SNS topic of a message: `routes[topic]`, else `topicArn`, else `${topicArnPrefix}${topic}`, else
 * `resolveTopicArn(topic)`. No topic is OUTBOXER_UNROUTABLE (the relay pauses the outbox topic until it has one).
 */
export function topicArnFor(message: OutboxMessage, options: ResolvedSnsPublisherOptions): string {
  const { topic } = message;
  const routed = Object.hasOwn(options.routes, topic) ? options.routes[topic] : undefined;
  if (routed !== undefined) return routed;
  if (options.topicArn !== undefined) return options.topicArn;
  if (options.topicArnPrefix !== undefined) {
    const arn = `${options.topicArnPrefix}${topic}`;
    if (!isTopicArn(arn)) {
      throw new PublishError(
        'OUTBOXER_INVALID_TOPIC',
        `message ${message.id}: topic "${topic}" does not make an SNS topic name after topicArnPrefix (letters, digits, - and _, a .fifo suffix, at most 256 characters); route it with routes or resolveTopicArn`,
        { permanent: true },
      );
    }
    return arn;
  }
  if (options.resolveTopicArn === undefined) throw unroutable(message, 'it is not in routes; add it there');
  let resolved: string | undefined;
  try {
    resolved = options.resolveTopicArn(topic);
  } catch {
    throw unroutable(message, 'resolveTopicArn threw; fix the function');
  }
  if (resolved === undefined) throw unroutable(message, 'resolveTopicArn returned undefined; add a topic for it');
  if (typeof resolved !== 'string' || !isTopicArn(resolved))
    throw unroutable(message, 'resolveTopicArn returned something that is not a topic ARN; fix the function');
  return resolved;
}
