import { z } from 'zod';
import { type AwsCommonOptions, awsCommonShape, freezeResolved, invalidOption, parseOptions, type ResolvedAwsCommonOptions } from '../aws/options.js';

export interface SnsPublisherOptions extends AwsCommonOptions {
  /** Every topic goes to this SNS topic: `arn:aws:sns:<region>:<account>:<name>`. */
  readonly topicArn?: string | undefined;
  /**
   * The SNS topic of an outbox topic is `${topicArnPrefix}${topic}`, e.g. `arn:aws:sns:eu-west-1:123456789012:` or
   * `...:123456789012:prod-`. The outbox topic must then be an SNS topic name (letters, digits, `-` and `_`, and
   * `.fifo` at the end for a FIFO topic); a topic with other dots is refused (use `routes` or `resolveTopicArn`).
   */
  readonly topicArnPrefix?: string | undefined;
  /** Topic ARN per outbox topic; looked up first. A topic neither here nor covered by another option is unroutable (it pauses). */
  readonly routes?: Readonly<Record<string, string>> | undefined;
  /** Topic ARN of an outbox topic, or undefined when it has none (the topic then pauses). Called on every publish: keep it cheap. */
  readonly resolveTopicArn?: ((topic: string) => string | undefined) | undefined;
  /** Largest message on the wire (body, base64 for binary bodies, plus attributes), also the bound of a batch's total. Default and maximum 262144 (the SNS limit). */
  readonly maxMessageBytes?: number | undefined;
}

export interface ResolvedSnsPublisherOptions extends ResolvedAwsCommonOptions {
  readonly topicArn: string | undefined;
  readonly topicArnPrefix: string | undefined;
  readonly routes: Readonly<Record<string, string>>;
  readonly resolveTopicArn: ((topic: string) => string | undefined) | undefined;
  readonly maxMessageBytes: number;
}

export const SNS_DEFAULTS = Object.freeze({ maxMessageBytes: 262_144 });

const TOPIC_ARN = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,251}(\.fifo)?$/;
const TOPIC_ARN_PREFIX = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{0,250}$/;

/** Whether `arn` is a topic ARN outboxer can publish to (its name at most 256 characters). */
export function isTopicArn(arn: string): boolean {
  return TOPIC_ARN.test(arn) && (arn.split(':').pop() ?? '').length <= 256;
}

const topicArn = z.string().refine(isTopicArn, 'is not an SNS topic ARN');

const schema = z
  .object({
    ...awsCommonShape,
    topicArn: topicArn.optional(),
    topicArnPrefix: z.string().regex(TOPIC_ARN_PREFIX, 'is not a topic ARN prefix').optional(),
    routes: z.record(z.string().min(1), topicArn).optional(),
    resolveTopicArn: z.custom<(topic: string) => string | undefined>((value) => typeof value === 'function', 'must be a function').optional(),
    maxMessageBytes: z.number().int().min(1024).max(262_144).default(SNS_DEFAULTS.maxMessageBytes),
  })
  .strict();

const FIXES: Readonly<Record<string, string>> = Object.freeze({
  topicArn: 'use the ARN CreateTopic returns: arn:aws:sns:<region>:<12-digit account>:<topic name>',
  topicArnPrefix: 'use a topic ARN without the name, or with the start of a name: arn:aws:sns:<region>:<account>: or ...:<account>:prod-',
  routes: 'map each outbox topic to a topic ARN: { "orders.created": "arn:aws:sns:<region>:<account>:orders" }',
  resolveTopicArn: 'pass (topic) => topic ARN or undefined',
  maxMessageBytes: 'use a whole number of bytes from 1024 to 262144 (the SNS limit)',
});

/** Resolves the options once: documented defaults, validated, frozen. Invalid → ConfigurationError naming the option and the fix. */
export function resolveSnsPublisherOptions(input: SnsPublisherOptions): ResolvedSnsPublisherOptions {
  const parsed = parseOptions('sns', schema, input, FIXES);
  const fallbacks = (['topicArn', 'topicArnPrefix', 'resolveTopicArn'] as const).filter((option) => parsed[option] !== undefined);
  if (fallbacks.length > 1) {
    invalidOption(
      'sns',
      fallbacks,
      'are alternatives: give one of topicArn (one SNS topic for every outbox topic), topicArnPrefix (one per outbox topic) or resolveTopicArn, plus routes if some topics go elsewhere',
    );
  }
  const routes = Object.freeze({ ...(parsed.routes ?? {}) });
  if (fallbacks.length === 0 && Object.keys(routes).length === 0) {
    invalidOption('sns', ['topicArn'], 'a destination is required: give topicArn, topicArnPrefix, resolveTopicArn or routes');
  }
  return freezeResolved(parsed, {
    topicArn: parsed.topicArn,
    topicArnPrefix: parsed.topicArnPrefix,
    routes,
    resolveTopicArn: parsed.resolveTopicArn,
    maxMessageBytes: parsed.maxMessageBytes,
  });
}
