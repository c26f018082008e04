export { createSqsPublisher } from './sqs-publisher.js';
export { resolveSqsPublisherOptions, SQS_DEFAULTS, type ResolvedSqsPublisherOptions, type SqsPublisherOptions } from './options.js';
export { SqsAttributeNames } from './wire.js';
export { AWS_PUBLISHER_DEFAULTS, type AwsCredentialsOption } from '../aws/options.js';
