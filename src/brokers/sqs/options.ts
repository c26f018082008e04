import { z } from 'zod';
import { type AwsCommonOptions, awsCommonShape, freezeResolved, invalidOption, parseOptions, type ResolvedAwsCommonOptions } from '../aws/options.js';

export interface SqsPublisherOptions extends AwsCommonOptions {
  /** Every topic goes to this queue: `https://sqs.<region>.amazonaws.com/<account>/<name>`. */
  readonly queueUrl?: string | undefined;
  /**
   * The queue of a topic is `${queueUrlPrefix}${topic}`, e.g. `https://sqs.eu-west-1.amazonaws.com/123456789012/`
   * or `.../123456789012/prod-`. The topic must then be a queue name (letters, digits, `-` and `_`, and a `.fifo`
   * suffix for a FIFO queue); a topic with other dots is refused (use `routes` or `resolveQueueUrl`).
   */
  readonly queueUrlPrefix?: string | undefined;
  /** Queue URL per topic; looked up first. A topic neither here nor covered by another option is unroutable (its topic pauses). */
  readonly routes?: Readonly<Record<string, string>> | undefined;
  /** Queue URL of a topic, or undefined when it has none (the topic then pauses). Called on every publish: keep it cheap. */
  readonly resolveQueueUrl?: ((topic: string) => string | undefined) | undefined;
  /**
   * Largest message on the wire (body, base64 for binary bodies, plus attributes), also the bound of a batch's total.
   * Default 262144 (256 KiB, what every queue accepts); at most 1048576 for queues whose MaximumMessageSize allows it.
   */
  readonly maxMessageBytes?: number | undefined;
}

export interface ResolvedSqsPublisherOptions extends ResolvedAwsCommonOptions {
  readonly queueUrl: string | undefined;
  readonly queueUrlPrefix: string | undefined;
  readonly routes: Readonly<Record<string, string>>;
  readonly resolveQueueUrl: ((topic: string) => string | undefined) | undefined;
  readonly maxMessageBytes: number;
}

export const SQS_DEFAULTS = Object.freeze({ maxMessageBytes: 262_144 });

/** `scheme://host/<account id>/<queue name>`; a name of letters, digits, `-`, `_`, and `.fifo` at the end for FIFO. */
const QUEUE_URL = /^https?:\/\/[^/@\s]+\/[0-9A-Za-z_-]{1,64}\/[A-Za-z0-9_-]{1,75}(\.fifo)?$/;
const QUEUE_URL_PREFIX = /^https?:\/\/[^/@\s]+\/[0-9A-Za-z_-]{1,64}\/[A-Za-z0-9_-]{0,74}$/;

/** Whether `url` is a queue URL outboxer can send to (its last segment a valid queue name, at most 80 characters). */
export function isQueueUrl(url: string): boolean {
  return QUEUE_URL.test(url) && (url.split('/').pop() ?? '').length <= 80;
}

const queueUrl = z.string().refine(isQueueUrl, 'is not a queue URL');

const schema = z
  .object({
    ...awsCommonShape,
    queueUrl: queueUrl.optional(),
    queueUrlPrefix: z.string().regex(QUEUE_URL_PREFIX, 'is not a queue URL prefix').optional(),
    routes: z.record(z.string().min(1), queueUrl).optional(),
    resolveQueueUrl: z.custom<(topic: string) => string | undefined>((value) => typeof value === 'function', 'must be a function').optional(),
    maxMessageBytes: z.number().int().min(1024).max(1_048_576).default(SQS_DEFAULTS.maxMessageBytes),
  })
  .strict();

const FIXES: Readonly<Record<string, string>> = Object.freeze({
  queueUrl: 'use the URL CreateQueue or GetQueueUrl returns: https://sqs.<region>.amazonaws.com/<account>/<queue name>',
  queueUrlPrefix: 'use a queue URL without the name, or with the start of a name: https://sqs.<region>.amazonaws.com/<account>/ or .../<account>/prod-',
  routes: 'map each topic to a queue URL: { "orders.created": "https://sqs.<region>.amazonaws.com/<account>/orders" }',
  resolveQueueUrl: 'pass (topic) => queue URL or undefined',
  maxMessageBytes: "use a whole number of bytes from 1024 to 1048576 (the SQS limit), at most the queue's MaximumMessageSize",
});

/** Resolves the options once: documented defaults, validated, frozen. Invalid → ConfigurationError naming the option and the fix. */
export function resolveSqsPublisherOptions(input: SqsPublisherOptions): ResolvedSqsPublisherOptions {
  const parsed = parseOptions('sqs', schema, input, FIXES);
  const fallbacks = (['queueUrl', 'queueUrlPrefix', 'resolveQueueUrl'] as const).filter((option) => parsed[option] !== undefined);
  if (fallbacks.length > 1) {
    invalidOption(
      'sqs',
      fallbacks,
      'are alternatives: give one of queueUrl (one queue for every topic), queueUrlPrefix (a queue per topic) or resolveQueueUrl, plus routes if some topics go elsewhere',
    );
  }
  const routes = Object.freeze({ ...(parsed.routes ?? {}) });
  if (fallbacks.length === 0 && Object.keys(routes).length === 0) {
    invalidOption('sqs', ['queueUrl'], 'a destination is required: give queueUrl, queueUrlPrefix, resolveQueueUrl or routes');
  }
  return freezeResolved(parsed, {
    queueUrl: parsed.queueUrl,
    queueUrlPrefix: parsed.queueUrlPrefix,
    routes,
    resolveQueueUrl: parsed.resolveQueueUrl,
    maxMessageBytes: parsed.maxMessageBytes,
  });
}
