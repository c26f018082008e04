import { z } from 'zod';
import { ConfigurationError } from '../../core/errors.js';
import type { Logger } from '../../core/ports.js';

/** Static credentials, or a provider the SDK calls (e.g. from `@aws-sdk/credential-providers`). */
export interface AwsCredentialIdentityOption {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
  readonly expiration?: Date;
}
export type AwsCredentialsOption = AwsCredentialIdentityOption | (() => Promise<AwsCredentialIdentityOption>);

/** Options the SQS and SNS publishers share. */
export interface AwsCommonOptions {
  /** AWS region, e.g. `eu-west-1`. Default: the SDK's chain (`AWS_REGION`, the shared config file). */
  readonly region?: string | undefined;
  /** Endpoint URL for an emulator or a VPC endpoint (`http://127.0.0.1:4566`). Default: the SDK's AWS endpoint for the region. */
  readonly endpoint?: string | undefined;
  /** Default: the SDK's default credential chain (environment, shared files, SSO, container and instance roles). */
  readonly credentials?: AwsCredentialsOption | undefined;
  /**
   * How long a publish waits for others to the same destination to share its batch request, in ms (0 to 50).
   * Default 0: the publishes started in the same event-loop turn go together, with no added delay.
   */
  readonly batchWindowMs?: number | undefined;
  /** Entries per batch request, 1 to 10 (the AWS maximum). Default 10. */
  readonly maxBatchSize?: number | undefined;
  /** Bound on one publish, from the call to the broker's answer (its batch's SDK retries included). Default 10000. */
  readonly publishTimeoutMs?: number | undefined;
  /** Bound on opening a TCP connection to the endpoint. Default 5000. */
  readonly connectTimeoutMs?: number | undefined;
  /** MessageGroupId of messages without a key on a FIFO queue or topic (they then share one group). Default `outboxer-no-key`. */
  readonly nullKeyGroupId?: string | undefined;
  /** pino-compatible logger. Default: silent. */
  readonly logger?: Logger | undefined;
}

export interface ResolvedAwsCommonOptions {
  readonly region: string | undefined;
  readonly endpoint: string | undefined;
  readonly credentials: AwsCredentialsOption | undefined;
  readonly batchWindowMs: number;
  readonly maxBatchSize: number;
  readonly publishTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly nullKeyGroupId: string;
  readonly logger: Logger | undefined;
  /** Secrets of static credentials, to scrub from driver messages. Not enumerable. */
  readonly secrets: readonly string[];
}

export const AWS_PUBLISHER_DEFAULTS = Object.freeze({
  batchWindowMs: 0,
  maxBatchSize: 10,
  publishTimeoutMs: 10_000,
  connectTimeoutMs: 5_000,
  nullKeyGroupId: 'outboxer-no-key',
});

/** 1 to 128 printable ASCII characters: what SQS and SNS accept as a MessageGroupId. */
export const GROUP_ID = /^[!-~]{1,128}$/;

const isLogger = (value: unknown): value is Logger =>
  typeof value === 'object' &&
  value !== null &&
  (['debug', 'info', 'warn', 'error'] as const).every((level) => typeof (value as Record<string, unknown>)[level] === 'function');

const isCredentials = (value: unknown): value is AwsCredentialsOption => {
  if (typeof value === 'function') return true;
  const given = value as { accessKeyId?: unknown; secretAccessKey?: unknown; sessionToken?: unknown } | null;
  return (
    typeof given === 'object' &&
    given !== null &&
    typeof given.accessKeyId === 'string' &&
    given.accessKeyId !== '' &&
    typeof given.secretAccessKey === 'string' &&
    given.secretAccessKey !== '' &&
    (given.sessionToken === undefined || typeof given.sessionToken === 'string')
  );
};

/** The shape both publishers' schemas start from: defaults and bounds of the shared options. */
export const awsCommonShape = {
  region: z
    .string()
    .regex(/^[a-z]{2}(-[a-z0-9]+)+$/)
    .max(40)
    .optional(),
  endpoint: z
    .url({ protocol: /^https?$/ })
    .refine((url) => !/^[a-z]+:\/\/[^/]*@/i.test(url), 'must not carry credentials')
    .optional(),
  credentials: z.custom<AwsCredentialsOption>(isCredentials).optional(),
  batchWindowMs: z.number().int().min(0).max(50).default(AWS_PUBLISHER_DEFAULTS.batchWindowMs),
  maxBatchSize: z.number().int().min(1).max(10).default(AWS_PUBLISHER_DEFAULTS.maxBatchSize),
  publishTimeoutMs: z.number().int().min(100).max(600_000).default(AWS_PUBLISHER_DEFAULTS.publishTimeoutMs),
  connectTimeoutMs: z.number().int().min(100).max(600_000).default(AWS_PUBLISHER_DEFAULTS.connectTimeoutMs),
  nullKeyGroupId: z.string().regex(GROUP_ID).default(AWS_PUBLISHER_DEFAULTS.nullKeyGroupId),
  logger: z.custom<Logger>(isLogger).optional(),
};

/** What each shared option must be, said in the error next to what was wrong. */
const COMMON_FIXES: Readonly<Record<string, string>> = Object.freeze({
  region: 'use an AWS region name such as eu-west-1',
  endpoint: 'use an http:// or https:// URL such as http://127.0.0.1:4566, without user or password',
  credentials: 'pass { accessKeyId, secretAccessKey, sessionToken? } or a provider function, or leave it out to use the default credential chain',
  batchWindowMs: 'use a whole number of milliseconds from 0 to 50',
  maxBatchSize: 'use a whole number from 1 to 10 (the AWS limit of a batch request)',
  publishTimeoutMs: 'use a whole number of milliseconds from 100 to 600000',
  connectTimeoutMs: 'use a whole number of milliseconds from 100 to 600000',
  nullKeyGroupId: 'use 1 to 128 printable ASCII characters without spaces',
  logger: 'pass an object with debug, info, warn and error methods (pino fits)',
});

export function invalidOption(publisher: string, options: readonly string[], problem: string): never {
  throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `${publisher} publisher option ${options.join(' and ')}: ${problem}`, { options });
}

/** Parses `input` with `schema` or throws a ConfigurationError naming the option, what was wrong and the fix. */
export function parseOptions<S extends z.ZodType>(publisher: string, schema: S, input: unknown, fixes: Readonly<Record<string, string>>): z.output<S> {
  if (typeof input !== 'object' || input === null) invalidOption(publisher, ['(root)'], 'an options object is required');
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (issue?.code === 'unrecognized_keys') {
    const known = Object.keys({ ...COMMON_FIXES, ...fixes }).join(', ');
    invalidOption(
      publisher,
      issue.keys.map((key) => JSON.stringify(key).slice(0, 60)),
      `is not an option (known: ${known})`,
    );
  }
  const path = issue?.path.join('.') ?? '';
  const top = String(issue?.path[0] ?? '');
  const fix = fixes[top] ?? COMMON_FIXES[top];
  // The value itself is never echoed: an endpoint or a credential may hold a secret.
  invalidOption(publisher, [path || '(root)'], `${issue?.message ?? 'invalid'}${fix === undefined ? '' : `; ${fix}`}`);
}

/** The resolved options: the shared part, then `own`, frozen; the credentials and their secrets kept off the enumerable surface. */
export function freezeResolved<Own extends object>(
  parsed: {
    region?: string | undefined;
    endpoint?: string | undefined;
    credentials?: AwsCredentialsOption | undefined;
    batchWindowMs: number;
    maxBatchSize: number;
    publishTimeoutMs: number;
    connectTimeoutMs: number;
    nullKeyGroupId: string;
    logger?: Logger | undefined;
  },
  own: Own,
): ResolvedAwsCommonOptions & Own {
  const { credentials } = parsed;
  const secrets = typeof credentials === 'object' ? [credentials.secretAccessKey, credentials.sessionToken ?? ''].filter((secret) => secret !== '') : [];
  const resolved = {
    region: parsed.region,
    endpoint: parsed.endpoint,
    batchWindowMs: parsed.batchWindowMs,
    maxBatchSize: parsed.maxBatchSize,
    publishTimeoutMs: parsed.publishTimeoutMs,
    connectTimeoutMs: parsed.connectTimeoutMs,
    nullKeyGroupId: parsed.nullKeyGroupId,
    logger: parsed.logger,
    ...own,
  };
  Object.defineProperty(resolved, 'credentials', { value: credentials, enumerable: false });
  Object.defineProperty(resolved, 'secrets', { value: Object.freeze(secrets), enumerable: false });
  return Object.freeze(resolved) as unknown as ResolvedAwsCommonOptions & Own;
}
