/**
 * Every option of the CLI, in one table: argument parsing (args.ts), the environment lookup and validation
 * (config.ts), the `--help` texts (help.ts) and the option reference in docs/cli.md (option-reference.ts,
 * `npm run docs:cli`) are all made from it, so that none of them can drift from the others.
 */
import { MAX_OLDER_THAN_SECONDS } from '../../core/pending-message-input.js';
import { ALL_COMMANDS, CONNECTED_COMMANDS, MAX_TIMER_MS, MIGRATE_COMMAND, type OptionDefinition, RELAY_COMMAND } from './option-definition.js';
import { PUBLISHER_OPTION_DEFINITIONS } from './publisher-option-definitions.js';
import { TUNING_OPTION_DEFINITIONS } from './tuning-option-definitions.js';

const connection: readonly OptionDefinition[] = [
  {
    flag: 'database-url',
    env: 'OUTBOXER_DATABASE_URL',
    section: 'connection',
    commands: ALL_COMMANDS,
    kind: 'text',
    placeholder: '<url>',
    summary: 'the database: `postgres://…`, `mysql://…` (MariaDB or MySQL; `mariadb://` too) or `sqlite:<file>`',
    defaultText: 'required',
    details:
      "PostgreSQL: query parameters understood by `pg` (e.g. `?sslmode=require`) pass through. MariaDB/MySQL: the path names the database (`mysql://app@db:3306/shop`). SQLite: `sqlite:./outbox.db` (created when missing, WAL mode). `sql` only reads the scheme, to print that dialect's DDL (PostgreSQL's without a URL); it connects to nothing.",
    asUsedBy: {
      sql: {
        summary: 'whose DDL to print, by its scheme: `postgres://…`, `mysql://…` or `sqlite:<file>`; nothing connects',
        defaultText: "optional: PostgreSQL's DDL without it",
      },
    },
  },
  {
    flag: 'schema',
    env: 'OUTBOXER_SCHEMA',
    section: 'connection',
    commands: ALL_COMMANDS,
    kind: 'text',
    placeholder: '<name>',
    summary: "schema of the outbox table (PostgreSQL; MariaDB/MySQL take the URL's database, SQLite the file)",
    defaultText: 'public',
  },
  {
    flag: 'table',
    env: 'OUTBOXER_TABLE',
    section: 'connection',
    commands: ALL_COMMANDS,
    kind: 'text',
    placeholder: '<name>',
    summary: 'outbox table name',
    defaultText: 'outbox',
    details: '(At most 40 bytes, so that index names fit.)',
  },
  {
    flag: 'log-level',
    env: 'OUTBOXER_LOG_LEVEL',
    section: 'connection',
    commands: CONNECTED_COMMANDS,
    kind: 'text',
    placeholder: '<level>',
    summary: '`debug`, `info`, `warn` or `error`, for the JSON logs on stderr',
    defaultText: 'info',
  },
];

const relay: readonly OptionDefinition[] = [
  {
    flag: 'publisher',
    env: 'OUTBOXER_PUBLISHER',
    section: 'relay',
    commands: RELAY_COMMAND,
    kind: 'text',
    placeholder: '<name>',
    summary: '`console`, `rabbitmq`, `nats`, `redis`, `mqtt`, `webhook`, `pubsub`, `sqs`, `sns`, `amqp10`: where the relay publishes',
    defaultText: 'console',
    details:
      "`console` prints one line per message on stdout, for development. Each broker's page in docs/publishers/ describes its wire and what its confirmation means.",
  },
  {
    flag: 'broker-url',
    env: 'OUTBOXER_BROKER_URL',
    section: 'relay',
    commands: RELAY_COMMAND,
    kind: 'text',
    placeholder: '<url>',
    summary: 'where to publish; for nats a comma-separated list of servers',
    defaultText: 'required but for console',
    details:
      '`amqp://user:pass@host:5672/vhost` (or `amqps://`) for RabbitMQ and AMQP 1.0; `nats://[user:pass@]host:4222` (or `tls://`, `ws://`, `wss://`) for NATS; `redis://[user:pass@]host:6379[/db]` (or `rediss://`); `mqtt://[user:pass@]host:1883` (or `mqtts://`, `ws://`, `wss://`); the endpoint `https://…` for webhook; `pubsub://<endpoint host[:port]>/<project>` for Pub/Sub (`pubsub://pubsub.googleapis.com/my-project`); the queue URL for sqs; the topic ARN (`arn:aws:sns:…`) for sns. Not accepted with `console`.',
  },
  ...PUBLISHER_OPTION_DEFINITIONS,
  {
    flag: 'config',
    env: 'OUTBOXER_CONFIG',
    section: 'relay',
    commands: RELAY_COMMAND,
    kind: 'text',
    placeholder: '<file>',
    summary: 'JSON file naming the destinations this relay fans out to, besides its own publisher',
    defaultText: 'none',
    details:
      "Each destination names its publisher, broker URL, that publisher's flags and an envelope (docs/fan-out.md). Rows stored with a destination go to it; rows without one go to `--publisher`.",
  },
  {
    flag: 'engine',
    env: 'OUTBOXER_ENGINE',
    section: 'relay',
    commands: RELAY_COMMAND,
    kind: 'text',
    placeholder: '<engine>',
    summary: '`v2`, the only engine: relays lease partitions',
    target: { relay: 'engine' },
    details:
      '`v2` needs a lease of at least 3 x the publish timeout. Engine v1, which claimed rows one by one, was removed before any release: `v1` is refused.',
  },
  {
    flag: 'migrate',
    env: 'OUTBOXER_MIGRATE',
    section: 'relay',
    commands: RELAY_COMMAND,
    kind: 'switch',
    summary: 'apply migrations before starting',
    defaultText: 'off',
    details: 'The variable takes `true` or `false`.',
  },
  {
    flag: 'tracing',
    env: 'OUTBOXER_TRACING',
    section: 'relay',
    commands: RELAY_COMMAND,
    kind: 'switch',
    summary: 'an OpenTelemetry `publish` span per publish, to the SDK registered with `node --import`',
    defaultText: 'off',
    details:
      'The variable takes `true` or `false`. Needs `@opentelemetry/api` next to outboxer (exit 2 without it) and an SDK registered before the CLI runs: see [The relay daemon](tracing.md#the-relay-daemon) in tracing.md.',
  },
];

const store: readonly OptionDefinition[] = [
  {
    flag: 'retain-published-ms',
    env: 'OUTBOXER_RETAIN_PUBLISHED_MS',
    section: 'store',
    commands: RELAY_COMMAND,
    kind: 'integer',
    placeholder: '<ms>',
    min: 0,
    max: Number.MAX_SAFE_INTEGER,
    summary: 'keep published rows this long; 0 deletes them once confirmed',
    defaultText: '0',
    target: { store: 'retainPublishedMs' },
    details: 'A positive value keeps a row as `published`; housekeeping deletes it later.',
  },
  {
    flag: 'idempotency-window-ms',
    env: 'OUTBOXER_IDEMPOTENCY_WINDOW_MS',
    section: 'store',
    commands: RELAY_COMMAND,
    kind: 'integer',
    placeholder: '<ms>',
    min: 1,
    max: Number.MAX_SAFE_INTEGER,
    summary: "how long enqueues' idempotency keys are kept",
    defaultText: '86400000, 24 h',
    target: { store: 'idempotencyWindowMs' },
    details: "Housekeeping deletes older keys; give it the application store's value.",
  },
  {
    flag: 'prepared-statements',
    env: 'OUTBOXER_PREPARED_STATEMENTS',
    section: 'store',
    commands: RELAY_COMMAND,
    kind: 'boolean',
    placeholder: '<true|false>',
    summary: "run the store's statements as named prepared statements",
    defaultText: 'true',
    target: { store: 'preparedStatements' },
    details:
      'Set `false` behind a pooler that cannot keep prepared statements across transactions (PgBouncer in transaction mode without `max_prepared_statements`).',
  },
];

const http: readonly OptionDefinition[] = [
  {
    flag: 'http-port',
    env: 'OUTBOXER_HTTP_PORT',
    section: 'http',
    commands: RELAY_COMMAND,
    kind: 'integer',
    placeholder: '<port>',
    min: 0,
    max: 65_535,
    summary: 'serve health, metrics, the admin API and the dashboard on this port',
    defaultText: 'off',
    details: '`0` takes any free port (the log line `ops http server listening` gives the URL). [http-api.md](http-api.md) describes the endpoints.',
  },
  {
    flag: 'http-host',
    env: 'OUTBOXER_HTTP_HOST',
    section: 'http',
    commands: RELAY_COMMAND,
    kind: 'text',
    placeholder: '<address>',
    summary: 'address the HTTP server listens on',
    defaultText: '127.0.0.1',
    details: 'Beyond loopback (`0.0.0.0` in a container), reads need the admin token too; `/health/*` never do.',
  },
  {
    flag: 'admin-token',
    env: 'OUTBOXER_ADMIN_TOKEN',
    section: 'http',
    commands: RELAY_COMMAND,
    kind: 'text',
    placeholder: '<token>',
    summary: 'bearer token for changes (retry, purge, pause, resume); at least 16 visible characters',
    defaultText: 'none: changes disabled',
    details: 'Prefer the variable: flags show in the process list. Never logged or echoed.',
  },
];

/** The filters of `pending list` and the allowance of `pending show` (flags only: no environment shows a body). */
const pendingOptions: readonly OptionDefinition[] = [
  {
    flag: 'topic',
    section: 'command',
    commands: ['pending list'],
    kind: 'text',
    placeholder: '<topic>',
    summary: 'only this topic, exactly',
    defaultText: 'any',
  },
  { flag: 'key', section: 'command', commands: ['pending list'], kind: 'text', placeholder: '<key>', summary: 'only this key, exactly', defaultText: 'any' },
  {
    flag: 'older-than-s',
    section: 'command',
    commands: ['pending list'],
    kind: 'integer',
    placeholder: '<s>',
    min: 0,
    max: MAX_OLDER_THAN_SECONDS,
    summary: 'only messages created at least this many seconds ago (database clock)',
    defaultText: 'any age',
  },
  {
    flag: 'payload',
    section: 'command',
    commands: ['pending show'],
    kind: 'switch',
    summary: "print the headers' values and the body too (hidden without it)",
  },
];

const command: readonly OptionDefinition[] = [
  {
    flag: 'partitions',
    section: 'command',
    commands: MIGRATE_COMMAND,
    kind: 'integer',
    placeholder: '<n>',
    min: 1,
    max: 1024,
    summary: 'resize to this many partitions (nothing when the table has them)',
    defaultText: 'unchanged',
  },
  {
    flag: 'resize-timeout-ms',
    section: 'command',
    commands: MIGRATE_COMMAND,
    kind: 'integer',
    placeholder: '<ms>',
    min: 1,
    max: MAX_TIMER_MS,
    summary: 'with --partitions: longest wait for v2 relays to give their partitions back',
    defaultText: '300000',
  },
  {
    flag: 'cancel-resize',
    section: 'command',
    commands: MIGRATE_COMMAND,
    kind: 'switch',
    summary: 'cancel a resize left waiting (grants open again at the old count)',
  },
  {
    flag: 'lock-timeout-ms',
    section: 'command',
    commands: MIGRATE_COMMAND,
    kind: 'integer',
    placeholder: '<ms>',
    min: 1,
    max: 60_000,
    summary: 'with --partitions: how long one try waits for a lock on the table',
    defaultText: '2000',
  },
  {
    flag: 'lock-attempts',
    section: 'command',
    commands: MIGRATE_COMMAND,
    kind: 'integer',
    placeholder: '<n>',
    min: 1,
    max: 1000,
    summary: 'with --partitions: tries for that lock before OUTBOXER_LOCK_TIMEOUT',
    defaultText: '30',
  },
  {
    flag: 'json',
    section: 'command',
    commands: ['status', 'dead list', 'topics list', 'destinations list', 'pending list', 'pending show'],
    kind: 'switch',
    summary: 'machine-readable output on stdout',
  },
  {
    flag: 'limit',
    section: 'command',
    commands: ['dead list', 'pending list'],
    kind: 'integer',
    placeholder: '<n>',
    min: 1,
    max: 100_000,
    summary: 'at most this many',
    defaultText: '100',
  },
  { flag: 'all', section: 'command', commands: ['dead retry', 'dead purge'], kind: 'switch', summary: 'every dead message (in bounded batches)' },
  {
    flag: 'destination',
    section: 'command',
    commands: ['dead list', 'dead retry', 'dead purge', 'pending list'],
    kind: 'text',
    placeholder: '<name>',
    summary: "only this destination's messages; the name `default` means those stored without one (the relay's own publisher)",
    defaultText: 'any',
  },
  {
    flag: 'reason',
    section: 'command',
    commands: ['topics pause', 'destinations pause'],
    kind: 'text',
    placeholder: '<text>',
    summary: "why: listed with the pause, and in the held messages' last error",
    defaultText: 'none',
  },
  ...pendingOptions,
  { flag: 'help', short: 'h', section: 'command', commands: ALL_COMMANDS, kind: 'switch', summary: 'show this help' },
  { flag: 'version', section: 'command', commands: [], kind: 'switch', summary: 'print the version' },
];

export const OPTION_DEFINITIONS: readonly OptionDefinition[] = Object.freeze([
  ...connection,
  ...relay,
  ...TUNING_OPTION_DEFINITIONS,
  ...store,
  ...http,
  ...command,
]);

export function optionDefinition(flag: string): OptionDefinition {
  const found = OPTION_DEFINITIONS.find((definition) => definition.flag === flag);
  if (found === undefined) throw new Error(`no option --${flag}`);
  return found;
}
