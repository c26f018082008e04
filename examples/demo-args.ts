/**
 * The demo's command line, read and checked before anything connects: a mistake costs one line and exit 2,
 * never a connection attempt, a stack trace, or a schema left behind.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigurationError, redactUrl } from '../src/index.js';
import { didYouMean } from '../src/ops/cli/did-you-mean.js';

export type DemoBrokerKind = 'memory' | 'rabbitmq' | 'nats';

export interface DemoArgs {
  readonly help: boolean;
  /** Undefined: PGlite in memory. */
  readonly databaseUrl: string | undefined;
  readonly broker: DemoBrokerKind;
  /** Undefined for `memory`; the local default of the broker when not given. */
  readonly brokerUrl: string | undefined;
  readonly orders: number;
  readonly keep: boolean;
}

export const DEMO_USAGE = `Usage: npm start -- [--database <url>] [--broker memory|rabbitmq|nats] [--broker-url <url>] [--orders <n>] [--keep]

  --database <url>     postgres://…, mysql://… (or mariadb://…) or sqlite:<file>; also --database-url,
                       or OUTBOXER_DATABASE_URL (default: PGlite, embedded, in memory)
  --broker <name>      memory, rabbitmq or nats; or OUTBOXER_PUBLISHER (default memory)
  --broker-url <url>   rabbitmq: amqp://… (default amqp://guest:guest@127.0.0.1:5672);
                       nats: nats://… (default nats://127.0.0.1:4222); or OUTBOXER_BROKER_URL
  --orders <n>         orders the service takes, 1-1000 (default 5; order 2 rolls back)
  --keep               keep what the run made (schema or tables, exchange and queue, stream)
  -h, --help           show this help
`;

const OPTIONS = {
  database: { type: 'string' },
  'database-url': { type: 'string' },
  broker: { type: 'string' },
  'broker-url': { type: 'string' },
  orders: { type: 'string' },
  keep: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

const BROKERS: readonly DemoBrokerKind[] = ['memory', 'rabbitmq', 'nats'];
const DATABASE_SCHEMES = ['postgres:', 'postgresql:', 'mysql:', 'mariadb:', 'sqlite:'];
const BROKER_SCHEMES: Readonly<Record<Exclude<DemoBrokerKind, 'memory'>, readonly string[]>> = Object.freeze({
  rabbitmq: ['amqp:', 'amqps:'],
  nats: ['nats:', 'tls:', 'ws:', 'wss:'],
});

/** A refusal of the command line: one line, exit 2. */
function refuse(message: string): ConfigurationError {
  return new ConfigurationError('OUTBOXER_INVALID_OPTION', `${message} ('npm start -- --help' lists the options)`);
}

function checkFlags(argv: readonly string[]): void {
  const { tokens } = parseArgs({ args: [...argv], options: OPTIONS, strict: false, allowPositionals: true, tokens: true });
  for (const token of tokens) {
    if (token.kind === 'positional') throw refuse(`unexpected argument '${token.value.slice(0, 60)}'`);
    if (token.kind !== 'option') continue;
    const option = (OPTIONS as Record<string, { type: 'string' | 'boolean' }>)[token.name];
    if (option === undefined) {
      throw refuse(`unknown option '${token.rawName}'${didYouMean(token.name, Object.keys(OPTIONS), (flag) => `--${flag}`)}`);
    }
    if (option.type === 'boolean' && token.inlineValue === true) throw refuse(`${token.rawName} takes no value: give ${token.rawName} alone`);
    if (option.type === 'string' && (token.value === undefined || (!token.inlineValue && token.value.startsWith('-')))) {
      throw refuse(`${token.rawName} needs a value`);
    }
  }
}

/** The URL's scheme is one of `schemes`, or a refusal that names what `from` takes. */
function checkUrl(url: string, from: string, schemes: readonly string[]): string {
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    throw refuse(`${from} is not a URL`);
  }
  if (!schemes.includes(protocol)) {
    const spelled = schemes.map((scheme) => (scheme === 'sqlite:' ? 'sqlite:<file>' : `${scheme}//…`));
    throw refuse(`${from} takes ${spelled.slice(0, -1).join(', ')} or ${spelled.at(-1) ?? ''}; got ${redactUrl(url)}`);
  }
  if (protocol === 'sqlite:' && url.slice('sqlite:'.length).replace(/^\/\//, '').split('?')[0] === '') {
    throw refuse(`${from} names no file: sqlite:./demo.db`);
  }
  return url;
}

function databaseUrl(values: Record<string, string | boolean | undefined>, env: NodeJS.ProcessEnv): string | undefined {
  const { database, 'database-url': databaseUrlFlag } = values as { database?: string; 'database-url'?: string };
  if (database !== undefined && databaseUrlFlag !== undefined && database !== databaseUrlFlag) {
    throw refuse('--database and --database-url name the same thing: give one of them');
  }
  const fromFlag = database ?? databaseUrlFlag;
  const url = fromFlag ?? (env.OUTBOXER_DATABASE_URL || undefined);
  if (url === undefined) return undefined;
  return checkUrl(url, fromFlag === undefined ? 'OUTBOXER_DATABASE_URL' : database === undefined ? '--database-url' : '--database', DATABASE_SCHEMES);
}

function brokerUrl(broker: DemoBrokerKind, values: Record<string, string | boolean | undefined>, env: NodeJS.ProcessEnv): string | undefined {
  const flag = values['broker-url'] as string | undefined;
  if (broker === 'memory') {
    if (flag !== undefined) throw refuse('--broker-url applies only to --broker rabbitmq or nats');
    return undefined;
  }
  const url = flag ?? (env.OUTBOXER_BROKER_URL || undefined);
  if (url === undefined) return undefined;
  const from = flag === undefined ? 'OUTBOXER_BROKER_URL' : '--broker-url';
  if (broker === 'nats' && url.includes(',')) throw refuse(`${from}: the demo takes one NATS server`);
  return checkUrl(url, from, BROKER_SCHEMES[broker]);
}

/** Reads and checks argv (without node and script) and the variables the demo shares with the CLI; throws a one-line ConfigurationError. */
export function parseDemoArgs(argv: readonly string[], env: NodeJS.ProcessEnv): DemoArgs {
  checkFlags(argv);
  const { values } = parseArgs({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: false });
  if (values.help === true) return { help: true, databaseUrl: undefined, broker: 'memory', brokerUrl: undefined, orders: 0, keep: false };
  const brokerFlag = values.broker;
  const brokerName = brokerFlag ?? (env.OUTBOXER_PUBLISHER || 'memory');
  if (!(BROKERS as readonly string[]).includes(brokerName)) {
    throw refuse(`${brokerFlag === undefined ? 'OUTBOXER_PUBLISHER' : '--broker'} must be memory, rabbitmq or nats; got ${JSON.stringify(brokerName.slice(0, 40))}`);
  }
  const broker = brokerName as DemoBrokerKind;
  const orders = values.orders === undefined ? 5 : /^\d{1,4}$/.test(values.orders) ? Number(values.orders) : Number.NaN;
  if (!(orders >= 1 && orders <= 1000)) throw refuse(`--orders must be a whole number from 1 to 1000; got ${JSON.stringify(String(values.orders).slice(0, 40))}`);
  return Object.freeze({
    help: false,
    databaseUrl: databaseUrl(values, env),
    broker,
    brokerUrl: brokerUrl(broker, values, env),
    orders,
    keep: values.keep === true,
  });
}
