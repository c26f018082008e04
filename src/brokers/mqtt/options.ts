import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { ConfigurationError } from '../../core/errors.js';
import { silentLogger } from '../../core/logger.js';
import type { Logger } from '../../core/ports.js';
import { redactUrl, secretsOfUrl } from '../../core/redact.js';
import { mqttStringFault, topicLevelsFault } from './mqtt-strings.js';

const MAX_TIMEOUT_MS = 10 * 60_000;
/** MQTT's Maximum Packet Size is at most 268,435,455 bytes (a four-byte Remaining Length). */
export const MQTT_MAX_PACKET_BYTES = 268_435_455;
const MAX_PREFIX_BYTES = 200;
const SCHEMES = new Set(['mqtt:', 'mqtts:', 'ws:', 'wss:']);

const timeoutMs = z.number().int().min(1).max(MAX_TIMEOUT_MS);

const mqttOptionsSchema = z
  .object({
    url: z.string().min(1),
    topicPrefix: z.string().min(1).optional(),
    clientId: z.string().min(1).max(65_535).optional(),
    username: z.string().min(1).optional(),
    password: z.string().min(1).optional(),
    publishTimeoutMs: timeoutMs.default(10_000),
    connectTimeoutMs: timeoutMs.default(10_000),
    keepaliveSeconds: z.number().int().min(0).max(65_535).default(30),
    maxMessageBytes: z.number().int().min(1).max(MQTT_MAX_PACKET_BYTES).optional(),
  })
  .strict();

export type MqttPublisherOptions = z.input<typeof mqttOptionsSchema> & {
  /** pino-compatible logger. Default: silent. */
  readonly logger?: Logger | undefined;
};

/** The defaults, as documented in docs/publishers/mqtt.md. */
export const MQTT_PUBLISHER_DEFAULTS = Object.freeze({ publishTimeoutMs: 10_000, connectTimeoutMs: 10_000, keepaliveSeconds: 30 });

export interface ResolvedMqttPublisherOptions {
  /** `mqtt://host:1883`, `mqtts://`, `ws://host/mqtt` or `wss://`, without credentials: what the client dials. */
  readonly url: string;
  /** The URL for people and logs: credentials hidden. */
  readonly redactedUrl: string;
  /** When set, the MQTT topic is `${topicPrefix}/${topic with . as /}`. */
  readonly topicPrefix: string | undefined;
  /** Default `outboxer` and 15 random hex digits (23 characters, what every MQTT server must accept). */
  readonly clientId: string;
  /** Not enumerable, as `password` and `secrets`: console.log and JSON.stringify never show them. */
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly secrets: readonly string[];
  /** Longest a publish may take, from the call to the PUBACK (connecting and waiting for the in-flight window included). */
  readonly publishTimeoutMs: number;
  /** Longest a connection attempt (TCP, TLS or WebSocket, CONNECT and CONNACK) may take; also bounds closing. */
  readonly connectTimeoutMs: number;
  /** MQTT Keep Alive: the client pings when idle, and a silently dead connection is found after 1.5 times this. 0 turns it off. */
  readonly keepaliveSeconds: number;
  /** Largest body to send; larger ones fail permanently without a round trip. Default: only the broker's Maximum Packet Size. */
  readonly maxMessageBytes: number | undefined;
  readonly logger: Logger;
}

function invalid(option: string, problem: string): never {
  throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `mqtt publisher option ${option}: ${problem}`, { options: option === '(root)' ? [] : [option] });
}

function decoded(value: string, shown: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    invalid('url', `${shown} has malformed percent-encoding in its credentials`);
  }
}

function parseUrl(text: string): { url: string; redactedUrl: string; username: string | undefined; password: string | undefined } {
  const redactedUrl = redactUrl(text);
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    invalid('url', 'is not a valid URL such as mqtt://host:1883 (value hidden, it may hold a password)');
  }
  if (!SCHEMES.has(parsed.protocol)) invalid('url', `must start with mqtt://, mqtts://, ws:// or wss://; got ${redactedUrl}`);
  if (parsed.hostname === '') invalid('url', `has no host: ${redactedUrl}`);
  const websocket = parsed.protocol === 'ws:' || parsed.protocol === 'wss:';
  if ((!websocket && parsed.pathname !== '' && parsed.pathname !== '/') || parsed.search !== '' || parsed.hash !== '') {
    invalid('url', `${redactedUrl} must be scheme://[user:password@]host[:port] (a path only for ws:// and wss://), with no query or fragment`);
  }
  const username = parsed.username === '' ? undefined : decoded(parsed.username, redactedUrl);
  const password = parsed.password === '' ? undefined : decoded(parsed.password, redactedUrl);
  parsed.username = '';
  parsed.password = '';
  return { url: parsed.toString(), redactedUrl, username, password };
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

/** Resolves the publisher's options once: documented defaults, validated, frozen. Throws ConfigurationError naming the option. */
export function resolveMqttPublisherOptions(input: MqttPublisherOptions): ResolvedMqttPublisherOptions {
  if (typeof input !== 'object' || input === null) invalid('(root)', 'options must be an object with at least url');
  const { logger, ...rest } = input;
  const parsed = mqttOptionsSchema.safeParse(rest);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    if (issue?.code === 'unrecognized_keys') {
      invalid(String(issue.keys[0]).slice(0, 60), `is not an option; known: ${[...Object.keys(mqttOptionsSchema.shape), 'logger'].join(', ')}`);
    }
    const path = issue?.path.join('.') ?? '';
    // never echo what zod says of the url or the password: it may quote a secret
    invalid(path === '' ? '(root)' : path, path === 'url' || path === 'password' ? 'must be a non-empty string' : (issue?.message ?? 'invalid'));
  }
  const options = parsed.data;
  const fromUrl = parseUrl(options.url);
  if (fromUrl.username !== undefined && options.username !== undefined) invalid('username', 'is given both in the url and as an option; give it once');
  if (fromUrl.password !== undefined && options.password !== undefined) invalid('password', 'is given both in the url and as an option; give it once');
  const username = options.username ?? fromUrl.username;
  const password = options.password ?? fromUrl.password;
  if (password !== undefined && username === undefined)
    invalid('password', 'needs a username (MQTT 5 allows a password alone, but few brokers do): set username too');

  const { topicPrefix } = options;
  if (topicPrefix !== undefined) {
    const fault = topicLevelsFault(topicPrefix) ?? (Buffer.byteLength(topicPrefix) > MAX_PREFIX_BYTES ? `is over ${MAX_PREFIX_BYTES} bytes` : undefined);
    if (fault !== undefined) invalid('topicPrefix', `${JSON.stringify(topicPrefix.slice(0, 80))} ${fault}; e.g. "tenant-a" or "site/7"`);
  }
  if (options.clientId !== undefined) {
    const fault = mqttStringFault(options.clientId);
    if (fault !== undefined) invalid('clientId', `${fault}; e.g. "orders-relay-1" (at most 23 letters and digits is what every broker must accept)`);
  }
  const resolved = {
    url: fromUrl.url,
    redactedUrl: fromUrl.redactedUrl,
    topicPrefix,
    clientId: options.clientId ?? `outboxer${randomBytes(8).toString('hex').slice(0, 15)}`,
    publishTimeoutMs: options.publishTimeoutMs,
    connectTimeoutMs: options.connectTimeoutMs,
    keepaliveSeconds: options.keepaliveSeconds,
    maxMessageBytes: options.maxMessageBytes,
    logger: resolveLogger(logger),
  };
  const secrets = [...secretsOfUrl(options.url), ...(password === undefined ? [] : [password])];
  Object.defineProperty(resolved, 'username', { value: username, enumerable: false });
  Object.defineProperty(resolved, 'password', { value: password, enumerable: false });
  Object.defineProperty(resolved, 'secrets', { value: Object.freeze([...new Set(secrets)]), enumerable: false });
  return Object.freeze(resolved as typeof resolved & Pick<ResolvedMqttPublisherOptions, 'username' | 'password' | 'secrets'>);
}
