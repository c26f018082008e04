export { createSnsPublisher } from './sns-publisher.js';
export { resolveSnsPublisherOptions, SNS_DEFAULTS, type ResolvedSnsPublisherOptions, type SnsPublisherOptions } from './options.js';
export { SnsAttributeNames } from './wire.js';
export { AWS_PUBLISHER_DEFAULTS, type AwsCredentialsOption } from '../aws/options.js';
