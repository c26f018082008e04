import { ConfigurationError } from '../../core/errors.js';
import { resolveRelayOptions, type RelayOptionsInput } from '../../core/relay-options.js';
import type { StoreTuning } from '../../core/ports/store-dialect.js';
import { checkOpsServerSettings } from '../http/ops-server-options.js';
import { OPTION_DEFINITIONS, optionDefinition } from './option-definitions.js';
import { targetPath } from './option-definition.js';
import { type OptionReader, settableBy } from './option-reader.js';
import type { PublisherSettings } from './publishers/cli-publisher.js';
import { resolvePublisherChoice } from './publisher-choice.js';
import { type DestinationSettings, readDestinations } from './relay-destinations.js';

/** A name of the publisher registry (`publishers/registry.ts`). */
export type PublisherName = string;
export type StoreSettings = StoreTuning;

export interface RelaySettings {
  readonly publisher: PublisherName;
  /** Its broker URLs (empty for `console`) and the flags of its own that were set. */
  readonly publisherSettings: PublisherSettings;
  /** The same broker URLs, for the start checks and the start log. */
  readonly brokerUrls: readonly string[];
  /** `--config`: the named destinations this relay fans out to, besides its own publisher (none by default). */
  readonly destinations: readonly DestinationSettings[];
  readonly migrate: boolean;
  /** `--tracing`: the publisher wrapped by `tracePublisher` of outboxer/otel, loaded only then. */
  readonly tracing: boolean;
  /** What the flags and the environment set, already accepted by `resolveRelayOptions`; its defaults fill the rest. */
  readonly options: RelayOptionsInput;
  readonly store: StoreSettings;
  /** The HTTP server of operations; undefined (off) unless a port is given. */
  readonly http: HttpSettings | undefined;
}

export interface HttpSettings {
  readonly port: number;
  readonly host: string;
  /** Never logged; undefined: changes are disabled. */
  readonly adminToken: string | undefined;
}

const HTTP_FLAGS: Readonly<Record<string, string>> = Object.freeze({ port: 'http-port', host: 'http-host', adminToken: 'admin-token' });

/**
 * `--http-port` turns the server on; `--http-host` and `--admin-token` are usage errors without it (their variables
 * are ignored then, as for other options that do not apply). The library's own rules check the host and the
 * token; a refusal names the flag and the variable, and never quotes the token.
 */
function httpSettings(reader: OptionReader): HttpSettings | undefined {
  const port = reader.integer('http-port');
  if (port === undefined) {
    for (const flag of ['http-host', 'admin-token']) {
      if (reader.isFlag(flag)) throw reader.error(`--${flag} applies only with --http-port (or OUTBOXER_HTTP_PORT): the HTTP server is off without a port`);
    }
    return undefined;
  }
  const host = reader.source('http-host')?.value ?? '127.0.0.1';
  const adminToken = reader.source('admin-token')?.value;
  try {
    checkOpsServerSettings({ host, port, ...(adminToken === undefined ? {} : { adminToken }) });
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    const flag = HTTP_FLAGS[error.options[0] ?? ''];
    const from = flag === undefined ? reader.source('http-host')?.from : reader.source(flag)?.from;
    const message = error.message.replace(/^http option \w+: /, '');
    throw reader.error(`${from === undefined ? '' : `${from}: `}${message}${flag === undefined ? '' : ` (set by ${settableBy(optionDefinition(flag))})`}`);
  }
  return Object.freeze({ port, host, adminToken });
}

/**
 * The relay and store options of the option table, from flags and environment. Rules across options
 * (publish timeout against lease, ...) are the library's: its message is kept and given the flags it names.
 */
function tuning(reader: OptionReader): { options: RelayOptionsInput; store: StoreSettings } {
  const relay: Record<string, string | number | boolean> = {};
  const retry: Record<string, string | number | boolean> = {};
  const store: Record<string, string | number | boolean> = {};
  for (const { flag, target } of OPTION_DEFINITIONS) {
    const value = target === undefined ? undefined : reader.typed(flag);
    if (target === undefined || value === undefined) continue;
    if ('relay' in target) relay[target.relay] = value;
    else if ('retry' in target) retry[target.retry] = value;
    else store[target.store] = value;
  }
  const { pollIntervalMs, maxPollIntervalMs } = relay;
  if (typeof pollIntervalMs === 'number' && maxPollIntervalMs === undefined) {
    // A poll interval above the default ceiling raises the ceiling instead of being refused.
    relay.maxPollIntervalMs = Math.max(pollIntervalMs, resolveRelayOptions().maxPollIntervalMs);
  }
  // The table's kinds and bounds typed the values; resolveRelayOptions below checks them against the library's schema.
  const options = { ...relay, ...(Object.keys(retry).length === 0 ? {} : { retry: Object.freeze(retry) }) } as RelayOptionsInput;
  try {
    resolveRelayOptions(options);
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    const named = OPTION_DEFINITIONS.filter(({ target }) => target !== undefined && error.options.includes(targetPath(target)));
    throw reader.error(`${error.message}${named.length === 0 ? '' : ` (set by ${named.map((definition) => settableBy(definition)).join('; ')})`}`);
  }
  return { options: Object.freeze(options), store: Object.freeze(store as StoreSettings) };
}

export function resolveRelaySettings(reader: OptionReader): RelaySettings {
  const configFile = reader.source('config')?.value;
  return Object.freeze({
    ...resolvePublisherChoice(reader),
    destinations: configFile === undefined ? Object.freeze([]) : readDestinations(configFile),
    migrate: reader.typed('migrate') === true,
    tracing: reader.typed('tracing') === true,
    ...tuning(reader),
    http: httpSettings(reader),
  });
}
