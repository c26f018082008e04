/** Usage texts: `outboxer help [command]`, `<command> --help`, and after every usage error. */

export type HelpTopic = 'main' | 'sql' | 'migrate' | 'status' | 'relay' | 'dead' | 'dead list' | 'dead retry' | 'dead purge';

const CONNECTION = `Connection options (flags win over the environment):
  --database-url <url>   PostgreSQL URL                       env OUTBOXER_DATABASE_URL (required)
  --schema <name>        schema of the outbox table           env OUTBOXER_SCHEMA (default public)
  --table <name>         outbox table name                    env OUTBOXER_TABLE (default outbox)
  --log-level <level>    debug | info | warn | error          env OUTBOXER_LOG_LEVEL (default info)
  -h, --help             show this help`;

const MAIN = `Usage: outboxer <command> [options]

Commands:
  sql                    print the DDL for the outbox table (no database needed)
  migrate                create or upgrade the outbox table
  relay                  publish committed messages to a broker until SIGTERM/SIGINT
  status [--json]        counts per state and the age of the oldest pending message
  dead list              list dead (parked) messages
  dead retry <id...>|--all   move dead messages back to pending
  dead purge <id...>|--all   delete dead messages
  help [command]         show help for a command

Global options:
  -h, --help             show help (also after a command: outboxer relay --help)
  --version              print the version

Exit codes: 0 ok, 1 runtime failure (database or broker unreachable, ...), 2 usage error.
Run 'outboxer help <command>' for the options of a command. Full reference: docs/cli.md`;

const TEXTS: Readonly<Record<HelpTopic, string>> = Object.freeze({
  main: MAIN,
  sql: `Usage: outboxer sql [--schema <name>] [--table <name>]

Prints the idempotent DDL script that 'outboxer migrate' would apply, for DBAs who apply it
themselves (psql -f). Needs no database connection.

Options:
  --schema <name>        env OUTBOXER_SCHEMA (default public)
  --table <name>         env OUTBOXER_TABLE (default outbox)
  -h, --help             show this help`,
  migrate: `Usage: outboxer migrate [options]

Creates the schema, the outbox table and its indexes, or applies the missing migrations.
Safe to run again and from several processes at once (advisory lock).

${CONNECTION}`,
  status: `Usage: outboxer status [--json] [options]

Prints how many messages are pending, scheduled, in flight, published (retained) and dead,
and the age in seconds of the oldest message not yet published.
  --json                 one JSON object on stdout, nothing else

${CONNECTION}`,
  relay: `Usage: outboxer relay [--publisher console|rabbitmq|nats] [options]

Claims committed messages, publishes them with the broker's confirmation and marks them,
until SIGTERM or SIGINT (graceful: the in-flight batch is confirmed or released). A second
signal forces exit 1. JSON logs go to stderr.

Relay options:
  --publisher <name>         console | rabbitmq | nats       env OUTBOXER_PUBLISHER (default console)
  --broker-url <url>         broker URL (required for rabbitmq and nats; for nats a
                             comma-separated list is accepted)  env OUTBOXER_BROKER_URL
  --exchange <name>          rabbitmq exchange                env OUTBOXER_EXCHANGE (default outbox)
  --subject-prefix <prefix>  nats subject prefix              env OUTBOXER_SUBJECT_PREFIX (default none)
  --batch-size <n>           messages per claim               env OUTBOXER_BATCH_SIZE (default 500)
  --lease-ms <ms>            claim lease, >= 1000             env OUTBOXER_LEASE_MS (default 30000)
  --publish-timeout-ms <ms>  per publish, <= lease/2          env OUTBOXER_PUBLISH_TIMEOUT_MS (default 10000)
  --poll-interval-ms <ms>    first idle poll delay            env OUTBOXER_POLL_INTERVAL_MS (default 250)
  --max-attempts <n>         attempts before a message is dead  env OUTBOXER_MAX_ATTEMPTS (default 10)
  --retain-published-ms <ms> keep published rows this long    env OUTBOXER_RETAIN_PUBLISHED_MS (default 0: delete)
  --migrate                  apply migrations before starting

${CONNECTION}`,
  dead: `Usage: outboxer dead list|retry|purge [options]

  dead list [--json] [--limit <n>]   list dead messages, oldest first
  dead retry <id...> | --all         move dead messages back to pending (attempts reset)
  dead purge <id...> | --all         delete dead messages

Run 'outboxer help dead <list|retry|purge>' for details.`,
  'dead list': `Usage: outboxer dead list [--json] [--limit <n>] [options]

Lists dead messages, oldest first: id, topic, type, key, attempts, reason, dead at.
  --json                 a JSON array on stdout (full reasons, ISO timestamps)
  --limit <n>            at most this many, 1..100000 (default 100)

${CONNECTION}`,
  'dead retry': `Usage: outboxer dead retry <id...> | --all [options]

Moves the given dead messages (UUIDs) or every dead message back to pending with fresh
attempts, and prints how many moved. An audit line goes to stderr.
  --all                  every dead message (in bounded batches)

${CONNECTION}`,
  'dead purge': `Usage: outboxer dead purge <id...> | --all [options]

Deletes the given dead messages (UUIDs) or every dead message, and prints how many were
deleted. An audit line goes to stderr.
  --all                  every dead message (in bounded batches)

${CONNECTION}`,
});

export function helpText(topic: HelpTopic): string {
  return `${TEXTS[topic]}\n`;
}
