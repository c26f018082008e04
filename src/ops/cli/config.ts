import { MAX_TABLE_NAME_BYTES, validateIdentifier } from '../../core/identifiers.js';
import { ConfigurationError } from '../../core/errors.js';
import { isUuid } from '../../core/ids.js';
import { checkDestinationPause, checkTopicPause } from '../../core/topic-pause-input.js';
import { destinationFilterFault } from '../destination-filter.js';
import { DATABASE_SCHEMES } from '../../stores/dialects.js';
import type { OptionValues } from './args.js';
import type { CommandName } from './command-names.js';
import { type MigrateSettings, resolveMigrateSettings } from './migrate-settings.js';
import { type Env, OptionReader } from './option-reader.js';
import { type PendingSettings, resolvePendingSettings } from './pending-settings.js';
import { type RelaySettings, resolveRelaySettings } from './relay-settings.js';

export type { Env } from './option-reader.js';
export type { PublisherName, RelaySettings, StoreSettings } from './relay-settings.js';
export type { MigrateSettings } from './migrate-settings.js';
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Everything a command needs, resolved once from flags and environment (flags win), frozen. */
export interface CliConfig {
  readonly command: CommandName;
  /** Undefined only for `sql` (which then prints PostgreSQL's DDL). */
  readonly databaseUrl: string | undefined;
  readonly schema: string;
  readonly table: string;
  readonly logLevel: LogLevel;
  readonly json: boolean;
  readonly limit: number;
  readonly all: boolean;
  readonly ids: readonly string[];
  /**
   * Only for `dead list|retry|purge` and `pending list`: `--destination` as given and checked (`default` for the
   * messages stored without one; `destinationFilter` makes it the ports' filter); undefined: every destination.
   */
  readonly destination: string | undefined;
  /** Only for `topics pause` and `topics resume`: the topic, checked as the store checks it. */
  readonly topic: string | undefined;
  /** Only for `destinations pause` and `destinations resume`: the destination (`default`: the relay's own publisher), checked as the store checks it. */
  readonly pausedDestination: string | undefined;
  /** Only for `topics pause` and `destinations pause`: `--reason`, trimmed; empty when not given. */
  readonly reason: string;
  readonly relay: RelaySettings | undefined;
  /** Only for `migrate`. */
  readonly migrate: MigrateSettings | undefined;
  /** Only for `pending list|show|delete`. */
  readonly pending: PendingSettings | undefined;
}

/** Resolves and validates the configuration of one command; throws UsageError (exit 2) on bad input. */
export function resolveConfig(command: CommandName, values: OptionValues, operands: readonly string[], env: Env): CliConfig {
  const reader = new OptionReader(values, env, command);
  const schema = reader.source('schema')?.value ?? 'public';
  const table = reader.source('table')?.value ?? 'outbox';
  try {
    // each dialect checks its own limits again when it opens the table
    validateIdentifier(schema, 'schema');
    validateIdentifier(table, 'table', MAX_TABLE_NAME_BYTES);
  } catch (error) {
    throw reader.error((error as Error).message);
  }
  let databaseUrl: string | undefined;
  const source = reader.source('database-url');
  if (source === undefined && command !== 'sql') throw reader.error('--database-url or OUTBOXER_DATABASE_URL is required');
  if (source !== undefined) databaseUrl = reader.url('database-url', source, DATABASE_SCHEMES);
  const all = values.all === true;
  if ((command === 'dead retry' || command === 'dead purge') && all === operands.length > 0) {
    throw reader.error(all ? 'give either message ids or --all, not both' : 'give the ids of the dead messages, or --all');
  }
  const takesIds = command === 'dead retry' || command === 'dead purge' || command === 'pending show' || command === 'pending delete';
  for (const id of takesIds ? operands : []) {
    if (!isUuid(id)) throw reader.error(`not a message id (UUID): ${JSON.stringify(id.slice(0, 60))}`);
  }
  const limit = command === 'dead list' || command === 'pending list' ? (reader.integer('limit') ?? 100) : 100;
  const destination = command.startsWith('dead ') || command === 'pending list' ? destinationOption(reader) : undefined;
  const reason = reader.source('reason')?.value ?? '';
  const pause = command === 'topics pause' || command === 'topics resume' ? topicPause(reader, operands[0], reason) : undefined;
  const destinationPause = command === 'destinations pause' || command === 'destinations resume' ? destinationPauseOf(reader, operands[0], reason) : undefined;
  return Object.freeze({
    command,
    databaseUrl,
    schema,
    table,
    logLevel: command === 'sql' ? 'info' : reader.oneOf<LogLevel>('log-level', ['debug', 'info', 'warn', 'error'], 'info'),
    json: values.json === true,
    limit,
    all,
    ids: Object.freeze(takesIds ? [...new Set(operands.map((id) => id.toLowerCase()))] : []),
    destination,
    topic: pause?.topic,
    pausedDestination: destinationPause?.destination,
    reason: pause?.reason ?? destinationPause?.reason ?? '',
    relay: command === 'relay' ? resolveRelaySettings(reader) : undefined,
    migrate: command === 'migrate' ? resolveMigrateSettings(reader) : undefined,
    pending: command.startsWith('pending ') ? resolvePendingSettings(reader, command, limit, operands) : undefined,
  });
}

/** `--destination`, refused before anything connects unless it is a destination's name (exit 2). */
function destinationOption(reader: OptionReader): string | undefined {
  const source = reader.source('destination');
  if (source === undefined) return undefined;
  const fault = destinationFilterFault(source.value);
  if (fault !== undefined) throw reader.error(`OUTBOXER_INVALID_DESTINATION: ${source.from}: ${fault}`);
  return source.value;
}

/** The topic and reason of a pause, refused before anything connects with the code the store would give (exit 2). */
function topicPause(reader: OptionReader, topic: string | undefined, reason: string): { readonly topic: string; readonly reason: string } {
  try {
    return checkTopicPause(topic, reason.trim());
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    throw reader.error(`${error.code}: ${error.message}`);
  }
}

/** The destination and reason of a destination pause, refused before anything connects with the code the store would give (exit 2). */
function destinationPauseOf(reader: OptionReader, destination: string | undefined, reason: string): { readonly destination: string; readonly reason: string } {
  try {
    return checkDestinationPause(destination, reason.trim());
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    throw reader.error(`${error.code}: ${error.message}`);
  }
}
