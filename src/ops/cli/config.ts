import { resolveTableName } from '../../stores/postgres/sql.js';
import type { CommandName, OptionName, OptionValues } from './args.js';
import { UsageError } from './errors.js';
import { redactUrl } from '../../core/redact.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type PublisherName = 'console' | 'rabbitmq' | 'nats';
export type Env = Readonly<Record<string, string | undefined>>;

export interface RelaySettings {
  readonly publisher: PublisherName;
  /** Required for rabbitmq and nats; for nats one or more servers. */
  readonly brokerUrls: readonly string[];
  readonly exchange?: string;
  readonly subjectPrefix?: string;
  readonly batchSize?: number;
  readonly leaseMs?: number;
  readonly publishTimeoutMs?: number;
  readonly pollIntervalMs?: number;
  readonly maxAttempts?: number;
  readonly retainPublishedMs: number;
  readonly migrate: boolean;
}

/** Everything a command needs, resolved once from flags and environment (flags win), frozen. */
export interface CliConfig {
  readonly command: CommandName;
  /** Undefined only for `sql`. */
  readonly databaseUrl: string | undefined;
  readonly schema: string;
  readonly table: string;
  readonly logLevel: LogLevel;
  readonly json: boolean;
  readonly limit: number;
  readonly all: boolean;
  readonly ids: readonly string[];
  readonly relay: RelaySettings | undefined;
}

const ENV: Readonly<Partial<Record<OptionName, string>>> = Object.freeze({
  'database-url': 'OUTBOXER_DATABASE_URL',
  schema: 'OUTBOXER_SCHEMA',
  table: 'OUTBOXER_TABLE',
  'log-level': 'OUTBOXER_LOG_LEVEL',
  publisher: 'OUTBOXER_PUBLISHER',
  'broker-url': 'OUTBOXER_BROKER_URL',
  exchange: 'OUTBOXER_EXCHANGE',
  'subject-prefix': 'OUTBOXER_SUBJECT_PREFIX',
  'batch-size': 'OUTBOXER_BATCH_SIZE',
  'lease-ms': 'OUTBOXER_LEASE_MS',
  'publish-timeout-ms': 'OUTBOXER_PUBLISH_TIMEOUT_MS',
  'poll-interval-ms': 'OUTBOXER_POLL_INTERVAL_MS',
  'max-attempts': 'OUTBOXER_MAX_ATTEMPTS',
  'retain-published-ms': 'OUTBOXER_RETAIN_PUBLISHED_MS',
});

const MAX_TIMER_MS = 2_147_483_647;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface Source {
  readonly value: string;
  /** How the user spelled it, for error messages: `--lease-ms` or `OUTBOXER_LEASE_MS`. */
  readonly from: string;
}

class Reader {
  constructor(
    private readonly values: OptionValues,
    private readonly env: Env,
    private readonly command: CommandName,
  ) {}

  string(name: OptionName): Source | undefined {
    const flag = this.values[name];
    if (typeof flag === 'string') return { value: flag, from: `--${name}` };
    const envName = ENV[name];
    const fromEnv = envName === undefined ? undefined : this.env[envName];
    // An empty variable counts as unset (compose files and CI often define them empty).
    return fromEnv === undefined || fromEnv === '' || envName === undefined ? undefined : { value: fromEnv, from: envName };
  }

  isFlag(name: OptionName): boolean {
    return this.values[name] !== undefined;
  }

  integer(name: OptionName, min: number, max: number): number | undefined {
    const source = this.string(name);
    if (source === undefined) return undefined;
    const number = /^\d{1,16}$/.test(source.value) ? Number(source.value) : Number.NaN;
    if (!Number.isSafeInteger(number) || number < min || number > max) {
      throw this.error(`${source.from} must be a whole number from ${min} to ${max}; got ${JSON.stringify(source.value.slice(0, 40))}`);
    }
    return number;
  }

  oneOf<T extends string>(name: OptionName, choices: readonly T[], fallback: T): T {
    const source = this.string(name);
    if (source === undefined) return fallback;
    if (!(choices as readonly string[]).includes(source.value)) {
      throw this.error(`${source.from} must be one of ${choices.join(', ')}; got ${JSON.stringify(source.value.slice(0, 40))}`);
    }
    return source.value as T;
  }

  error(message: string): UsageError {
    return new UsageError(message, this.command);
  }
}

function checkUrl(reader: Reader, source: Source, protocols: readonly string[]): string {
  let protocol: string;
  try {
    protocol = new URL(source.value).protocol;
  } catch {
    throw reader.error(`${source.from} is not a valid URL`);
  }
  if (!protocols.includes(protocol)) {
    throw reader.error(`${source.from} must start with ${protocols.map((p) => `${p}//`).join(' or ')}; got ${redactUrl(source.value)}`);
  }
  return source.value;
}

function resolveRelay(reader: Reader, values: OptionValues): RelaySettings {
  const publisher = reader.oneOf<PublisherName>('publisher', ['console', 'rabbitmq', 'nats'], 'console');
  const misplaced = (name: OptionName, wanted: PublisherName | 'a broker') => {
    if (reader.isFlag(name)) throw reader.error(`--${name} applies only to ${wanted === 'a broker' ? 'rabbitmq and nats' : wanted}, not to --publisher ${publisher}`);
  };
  let brokerUrls: string[] = [];
  if (publisher === 'console') misplaced('broker-url', 'a broker');
  else {
    const source = reader.string('broker-url');
    if (source === undefined) throw reader.error(`--publisher ${publisher} needs --broker-url or OUTBOXER_BROKER_URL`);
    const parts = publisher === 'nats' ? source.value.split(',').map((part) => part.trim()) : [source.value];
    const protocols = publisher === 'nats' ? ['nats:', 'tls:', 'ws:', 'wss:'] : ['amqp:', 'amqps:'];
    brokerUrls = parts.map((part) => checkUrl(reader, { value: part, from: source.from }, protocols));
  }
  if (publisher !== 'rabbitmq') misplaced('exchange', 'rabbitmq');
  if (publisher !== 'nats') misplaced('subject-prefix', 'nats');
  const exchange = publisher === 'rabbitmq' ? reader.string('exchange')?.value : undefined;
  const subjectPrefix = publisher === 'nats' ? reader.string('subject-prefix')?.value : undefined;
  const numbers = {
    batchSize: reader.integer('batch-size', 1, 10_000),
    leaseMs: reader.integer('lease-ms', 1000, MAX_TIMER_MS),
    publishTimeoutMs: reader.integer('publish-timeout-ms', 1, MAX_TIMER_MS),
    pollIntervalMs: reader.integer('poll-interval-ms', 1, MAX_TIMER_MS),
    maxAttempts: reader.integer('max-attempts', 1, 1000),
  };
  const defined = Object.fromEntries(Object.entries(numbers).filter(([, value]) => value !== undefined));
  return Object.freeze({
    publisher,
    brokerUrls: Object.freeze(brokerUrls),
    ...(exchange === undefined ? {} : { exchange }),
    ...(subjectPrefix === undefined ? {} : { subjectPrefix }),
    ...defined,
    retainPublishedMs: reader.integer('retain-published-ms', 0, Number.MAX_SAFE_INTEGER) ?? 0,
    migrate: values.migrate === true,
  });
}

/** Resolves and validates the configuration of one command; throws UsageError (exit 2) on bad input. */
export function resolveConfig(command: CommandName, values: OptionValues, operands: readonly string[], env: Env): CliConfig {
  const reader = new Reader(values, env, command);
  const schema = reader.string('schema')?.value ?? 'public';
  const table = reader.string('table')?.value ?? 'outbox';
  try {
    resolveTableName(schema, table);
  } catch (error) {
    throw reader.error((error as Error).message);
  }
  let databaseUrl: string | undefined;
  if (command !== 'sql') {
    const source = reader.string('database-url');
    if (source === undefined) throw reader.error('--database-url or OUTBOXER_DATABASE_URL is required');
    databaseUrl = checkUrl(reader, source, ['postgres:', 'postgresql:']);
  }
  const all = values.all === true;
  if ((command === 'dead retry' || command === 'dead purge') && all === (operands.length > 0)) {
    throw reader.error(all ? 'give either message ids or --all, not both' : 'give the ids of the dead messages, or --all');
  }
  for (const id of operands) {
    if (!UUID.test(id)) throw reader.error(`not a message id (UUID): ${JSON.stringify(id.slice(0, 60))}`);
  }
  return Object.freeze({
    command,
    databaseUrl,
    schema,
    table,
    logLevel: command === 'sql' ? 'info' : reader.oneOf<LogLevel>('log-level', ['debug', 'info', 'warn', 'error'], 'info'),
    json: values.json === true,
    limit: command === 'dead list' ? (reader.integer('limit', 1, 100_000) ?? 100) : 100,
    all,
    ids: Object.freeze([...new Set(operands.map((id) => id.toLowerCase()))]),
    relay: command === 'relay' ? resolveRelay(reader, values) : undefined,
  });
}
