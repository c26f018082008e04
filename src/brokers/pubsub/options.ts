import type { ClientConfig } from '@google-cloud/pubsub';
import { z } from 'zod';
import { ConfigurationError } from '../../core/errors.js';
import { silentLogger } from '../../core/logger.js';
import type { Logger } from '../../core/ports.js';

/** A Google Cloud project id (6-30 characters), optionally domain-scoped (`example.com:my-project`). */
const PROJECT_ID = /^(?:[a-z0-9][a-z0-9.-]*:)?[a-z][a-z0-9-]{4,28}[a-z0-9]$/;
/** What a Pub/Sub topic id may start with: a letter, then letters, digits and `- _ . ~ + %`. */
const TOPIC_PREFIX = /^[A-Za-z][A-Za-z0-9\-_.~+%]*$/;
/** `host`, `host:port` or `http(s)://host[:port]`, no path, no credentials. */
const API_ENDPOINT = /^(?:https?:\/\/)?(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?\/?$/;
const MAX_TIMEOUT_MS = 10 * 60_000;

/** Every default in one place; the schema below applies them. */
export const PUBSUB_PUBLISHER_DEFAULTS = Object.freeze({
  publishTimeoutMs: 10_000,
  ordering: true,
  batching: Object.freeze({ maxMessages: 100, maxMilliseconds: 5 }),
});

/** A whole number from `min` to `max`, every refusal in one message that says so. */
function wholeNumber(min: number, max: number, unit = ''): z.ZodNumber {
  const error = `must be a whole number${unit === '' ? '' : ` of${unit}`} from ${min} to ${max}`;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error });
}

const pubSubOptionsSchema = z
  .object(
    {
      projectId: z.string({ error: 'is required: the Google Cloud project id that holds the topics, e.g. "my-project"' }).regex(PROJECT_ID, {
        error: 'must be a Google Cloud project id: 6 to 30 lowercase letters, digits and hyphens, starting with a letter (e.g. "my-project")',
      }),
      topicPrefix: z
        .string({ error: 'must be a string: the start of every topic id, e.g. "outbox-"' })
        .max(200, { error: 'must be at most 200 characters' })
        .regex(TOPIC_PREFIX, { error: 'must start with a letter and hold only letters, digits and - _ . ~ + % (what a Pub/Sub topic id allows)' })
        .refine((prefix) => !prefix.toLowerCase().startsWith('goog'), { error: 'must not start with "goog" (reserved by Google)' })
        .optional(),
      apiEndpoint: z
        .string({ error: 'must be a string, host[:port]' })
        .regex(API_ENDPOINT, {
          error: 'must be host[:port] or http(s)://host[:port], e.g. "127.0.0.1:8085" (the emulator) or "europe-west1-pubsub.googleapis.com"',
        })
        .optional(),
      publishTimeoutMs: wholeNumber(1, MAX_TIMEOUT_MS, ' milliseconds').default(PUBSUB_PUBLISHER_DEFAULTS.publishTimeoutMs),
      ordering: z.boolean({ error: 'must be true or false' }).default(PUBSUB_PUBLISHER_DEFAULTS.ordering),
      batching: z
        .object(
          {
            maxMessages: wholeNumber(1, 1000).default(PUBSUB_PUBLISHER_DEFAULTS.batching.maxMessages),
            maxMilliseconds: wholeNumber(0, 1000, ' milliseconds').default(PUBSUB_PUBLISHER_DEFAULTS.batching.maxMilliseconds),
          },
          { error: 'must be an object { maxMessages, maxMilliseconds }' },
        )
        .strict()
        .prefault({}),
    },
    { error: 'must be an object' },
  )
  .strict();

/** What the client gets besides our own options: credentials, keepalive, gRPC settings (`projectId` and `apiEndpoint` are ours). */
export type PubSubClientConfig = Omit<ClientConfig, 'projectId' | 'apiEndpoint'>;

export type PubSubPublisherOptions = z.input<typeof pubSubOptionsSchema> & {
  /** pino-compatible logger. Default: silent. */
  readonly logger?: Logger | undefined;
  /** Passed to `new PubSub(...)` as it is (e.g. `keyFilename`, `credentials`). Default: the client's own (ADC). */
  readonly clientConfig?: PubSubClientConfig | undefined;
};

export interface ResolvedPubSubPublisherOptions {
  /** The project that holds the topics. Required. */
  readonly projectId: string;
  /** Put in front of every topic id: Pub/Sub topic id = `${topicPrefix}${mapped topic}`. Default: none. */
  readonly topicPrefix: string;
  /**
   * `host[:port]` of the service. Default: the client's (`pubsub.googleapis.com`, or `PUBSUB_EMULATOR_HOST`).
   * An endpoint outside `*.googleapis.com` is taken as an emulator (plain text, no credentials), as the client does.
   */
  readonly apiEndpoint: string | undefined;
  /** The endpoint is an emulator: the client talks plain text and sends no credentials. */
  readonly emulator: boolean;
  /** Longest a publish may take, from the call to the server's message id. Default 10000. */
  readonly publishTimeoutMs: number;
  /** Publish with the message key as ordering key (`messageOrdering` on the topic's publisher). Default true. */
  readonly ordering: boolean;
  /** The client's batching: a batch goes out at `maxMessages` (default 100) or after `maxMilliseconds` (default 5). */
  readonly batching: Readonly<{ maxMessages: number; maxMilliseconds: number }>;
  readonly logger: Logger;
  /** Frozen copy of the `clientConfig` option. Not enumerable: console.log and JSON.stringify never show credentials. */
  readonly clientConfig: PubSubClientConfig;
  /** Secrets found in `clientConfig` (a private key, an API key), to scrub from driver messages. Not enumerable. */
  readonly secrets: readonly string[];
}

function invalid(option: string, problem: string): never {
  throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `pubsub publisher option ${option}: ${problem}`, { options: option === '(root)' ? [] : [option] });
}

function resolveLogger(value: unknown): Logger {
  if (value === undefined) return silentLogger;
  const candidate: Partial<Record<keyof Logger, unknown>> | null = value;
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    !(['debug', 'info', 'warn', 'error'] as const).every((level) => typeof candidate[level] === 'function')
  ) {
    invalid('logger', 'must have debug, info, warn and error methods (pino fits)');
  }
  return value as Logger;
}

function resolveClientConfig(value: unknown): PubSubClientConfig {
  if (value === undefined) return Object.freeze({});
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    invalid('clientConfig', 'must be an object of @google-cloud/pubsub ClientConfig settings');
  for (const own of ['projectId', 'apiEndpoint'] as const) {
    if (own in value) invalid(`clientConfig.${own}`, `use the publisher option ${own} instead (it is validated and shown in errors)`);
  }
  return Object.freeze({ ...(value as PubSubClientConfig) });
}

/** Secret strings a driver message could echo: a service account's private key, an API key, OAuth secrets. */
function secretsOf(config: PubSubClientConfig): string[] {
  const credentials = (config as { credentials?: Record<string, unknown> }).credentials ?? {};
  const candidates = [credentials.private_key, credentials.client_secret, credentials.refresh_token, (config as { apiKey?: unknown }).apiKey];
  return candidates.filter((secret): secret is string => typeof secret === 'string' && secret.length >= 4);
}

/** What the client itself takes as an emulator: an endpoint outside googleapis.com, unless `emulatorMode` says otherwise. */
function isEmulator(apiEndpoint: string | undefined, config: PubSubClientConfig): boolean {
  if (config.emulatorMode !== undefined) return config.emulatorMode;
  if (apiEndpoint === undefined) return false;
  const host = apiEndpoint
    .replace(/^https?:\/\//, '')
    .replace(/\/$/, '')
    .replace(/:\d+$/, '');
  return !host.endsWith('.googleapis.com') && config.universeDomain === undefined;
}

/** Resolves the publisher's options once: documented defaults, validated, frozen. Throws ConfigurationError naming the option. */
export function resolvePubSubPublisherOptions(input: PubSubPublisherOptions): ResolvedPubSubPublisherOptions {
  if (typeof input !== 'object' || input === null) invalid('(root)', 'options must be an object with at least projectId');
  const { logger, clientConfig, ...rest } = input;
  const parsed = pubSubOptionsSchema.safeParse(rest);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    if (issue?.code === 'unrecognized_keys') {
      const nested = issue.path.length > 0;
      const known = nested
        ? Object.keys(pubSubOptionsSchema.shape.batching.unwrap().shape)
        : [...Object.keys(pubSubOptionsSchema.shape), 'logger', 'clientConfig'];
      const names = issue.keys.map((key) => JSON.stringify(key.slice(0, 60))).join(', ');
      invalid(nested ? `${issue.path.join('.')}.${names}` : names, `is not an option; known: ${known.join(', ')}`);
    }
    invalid(issue?.path.join('.') || '(root)', issue?.message ?? 'is invalid');
  }
  const options = parsed.data;
  const config = resolveClientConfig(clientConfig);
  const resolved = {
    projectId: options.projectId,
    topicPrefix: options.topicPrefix ?? '',
    apiEndpoint: options.apiEndpoint,
    emulator: isEmulator(options.apiEndpoint, config),
    publishTimeoutMs: options.publishTimeoutMs,
    ordering: options.ordering,
    batching: Object.freeze({ ...options.batching }),
    logger: resolveLogger(logger),
  };
  Object.defineProperty(resolved, 'clientConfig', { value: config, enumerable: false });
  Object.defineProperty(resolved, 'secrets', { value: Object.freeze(secretsOf(config)), enumerable: false });
  return Object.freeze(resolved as typeof resolved & Pick<ResolvedPubSubPublisherOptions, 'clientConfig' | 'secrets'>);
}

/**
 * The `projectId` and `apiEndpoint` of a broker URL `pubsub://<endpoint host[:port]>/<projectId>`, as the CLI's
 * `--broker-url` takes it: `pubsub://pubsub.googleapis.com/my-project` (Google Cloud, credentials from ADC),
 * `pubsub://europe-west1-pubsub.googleapis.com/my-project` (a regional endpoint), `pubsub://127.0.0.1:8085/my-project`
 * (the emulator). Credentials never ride in the URL: one that carries any, a query or more path is refused.
 */
export function pubSubOptionsFromUrl(url: string): { readonly projectId: string; readonly apiEndpoint: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    invalid('url', 'is not a URL; expected pubsub://<endpoint host[:port]>/<projectId>, e.g. pubsub://pubsub.googleapis.com/my-project');
  }
  if (parsed.protocol !== 'pubsub:') invalid('url', `must start with pubsub://; got ${JSON.stringify(parsed.protocol)}`);
  if (parsed.username !== '' || parsed.password !== '')
    invalid('url', 'must not carry credentials: the client finds them (Application Default Credentials, GOOGLE_APPLICATION_CREDENTIALS)');
  const projectId = parsed.pathname.replace(/^\//, '');
  if (parsed.hostname === '' || projectId === '' || projectId.includes('/') || parsed.search !== '' || parsed.hash !== '') {
    invalid('url', 'must be pubsub://<endpoint host[:port]>/<projectId>, e.g. pubsub://pubsub.googleapis.com/my-project or pubsub://127.0.0.1:8085/my-project');
  }
  return Object.freeze({ projectId, apiEndpoint: parsed.host });
}
