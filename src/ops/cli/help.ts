/** Usage texts: `outboxer help [command]`, `<command> --help`, and their usage line after a usage error. */

import type { HelpTopic, CommandName, UsageShown } from './command-names.js';
import { helpBlock } from './option-reference.js';
import { PUBLISHER_NAMES } from './publishers/registry.js';

/** The connection options as a command takes them (`sql` only `--schema` and `--table`). */
const connection = (command: CommandName) => `Connection options (flags win over the environment):
${helpBlock(command, ['connection'])}
${helpBlock(command, ['command'], ['help'])}`;

const MAIN = `Usage: outboxer <command> [options]

Commands:
  sql                    print the DDL for the outbox table (no database needed)
  migrate                create or upgrade the outbox table; resize its partitions
  relay                  publish committed messages to a broker until SIGTERM/SIGINT
  status [--json]        counts per state, the oldest pending message's age, the engine
  dead list              list dead (parked) messages
  dead retry <id...>|--all   move dead messages back to pending
  dead purge <id...>|--all   delete dead messages
  topics list            list paused topics: by operators, or by relays (destination missing)
  topics pause <topic>   hold a topic's messages in every relay of the table
  topics resume <topic>  end a pause
  destinations list      list the destinations operators paused (every topic of each)
  destinations pause <name>   hold a whole destination's messages in every relay
  destinations resume <name>  end a destination's pause
  pending list           list pending messages (filters: topic, key, age, destination)
  pending show <id>      inspect one pending message (its body only with --payload)
  pending delete <id...> delete pending messages (a relay may still publish one it read)
  help [command]         show help for a command

Global options:
  -h, --help             show help (also after a command: outboxer relay --help)
  --version              print the version

Exit codes: 0 ok, 1 runtime failure (database or broker unreachable, ...), 2 usage error or,
for relay, a misconfiguration found at start (table not migrated, credentials or vhost refused, ...).
Run 'outboxer help <command>' for the options of a command. Full reference: docs/cli.md`;

/** The help of `outboxer pending`, spread into TEXTS. */
const PENDING_TEXTS = {
  pending: () => `Usage: outboxer pending list|show|delete [options]

  pending list [--topic <topic>] [--key <key>] [--older-than-s <s>] [--destination <name>]
               [--limit <n>] [--json]   list pending messages in store order
  pending show <id> [--payload] [--json]   inspect one (headers' values and body only with --payload)
  pending delete <id...>             delete pending messages (audited)

Run 'outboxer help pending <list|show|delete>' for details.`,
  'pending list':
    () => `Usage: outboxer pending list [--topic <topic>] [--key <key>] [--older-than-s <s>] [--destination <name>] [--limit <n>] [--json] [options]

Lists pending messages (due or scheduled) in store order, one line each: id, seq, topic,
destination (default: the relay's own publisher), key, attempts, age, due (when scheduled: a
backoff, a hold, a delay), and the last error, whole. Never a body. Writes nothing.
${helpBlock('pending list', ['command'], ['topic', 'key', 'older-than-s', 'destination', 'limit', 'json'])}

${connection('pending list')}`,
  'pending show': () => `Usage: outboxer pending show <id> [--payload] [--json] [options]

Shows one pending message: where it stands, its content type, header names and body size.
Its headers' values and its body are printed only with --payload (JSON text as stored, a binary
body as base64). Exit 1 (OUTBOXER_NOT_FOUND) when no pending message has this id.
${helpBlock('pending show', ['command'], ['payload', 'json'])}

${connection('pending show')}`,
  'pending delete': () => `Usage: outboxer pending delete <id...> [options]

Deletes the given messages (UUIDs) where they are still pending, and prints how many; ids that
are not pending messages are reported on stderr (exit 0). An audit line goes to stderr. A relay
that read a message before the delete may still publish it once; deleting a failing message
lets the later messages of its key go on (docs/cli.md, outboxer pending).

${connection('pending delete')}`,
} satisfies Partial<Record<HelpTopic, () => string>>;

/** Built when asked for: the relay's defaults come from the library. */
const TEXTS: Readonly<Record<HelpTopic, () => string>> = Object.freeze({
  main: () => MAIN,
  ...PENDING_TEXTS,
  sql: () => `Usage: outboxer sql [--database-url <url>] [--schema <name>] [--table <name>]

Prints the idempotent DDL script that 'outboxer migrate' would apply, for DBAs who apply it
themselves (psql -f). Needs no database connection.

${connection('sql')}`,
  migrate: () => `Usage: outboxer migrate [--partitions <n>] [--cancel-resize] [options]

Creates the schema, the outbox table and its indexes, or applies the missing migrations.
Safe to run again and from several processes at once (advisory lock). Then, only when asked,
on PostgreSQL: resizes the table's partitions (--partitions; waits for the relays to give
theirs back), or cancels a resize left waiting. Each step is idempotent: run it again after
a failure. Progress goes to stderr, one line per step done to stdout.
See docs/resizing-partitions.md.

Partitions:
${helpBlock('migrate', ['relay', 'command'], ['partitions', 'resize-timeout-ms', 'cancel-resize', 'lock-timeout-ms', 'lock-attempts'])}

${connection('migrate')}`,
  status: () => `Usage: outboxer status [--json] [options]

Prints how many messages are pending, scheduled, published (retained) and dead, the age in
seconds of the oldest message not yet published, and the engine: the partition count and
generation, a waiting resize, the live relays with the partitions they hold and the unowned
partitions. Writes nothing.
  --json                 one JSON object on stdout, nothing else

${connection('status')}`,
  relay: () => `Usage: outboxer relay [--publisher ${PUBLISHER_NAMES.join('|')}] [options]

Publishes committed messages with the broker's confirmation and marks them, until SIGTERM or
SIGINT (graceful: the in-flight batch is confirmed and its partitions given back). It leases
partitions of the table (engine v2). A second signal forces exit 1.
JSON logs go to stderr.

Relay options:
${helpBlock('relay', ['relay'])}

Tuning (the library's relay options):
${helpBlock('relay', ['tuning'])}

Store options:
${helpBlock('relay', ['store'])}

HTTP server of operations (health, metrics, admin API, dashboard; docs/http-api.md):
${helpBlock('relay', ['http'])}

${connection('relay')}`,
  dead: () => `Usage: outboxer dead list|retry|purge [options]

  dead list [--json] [--limit <n>]   list dead messages, oldest first
  dead retry <id...> | --all         move dead messages back to pending (attempts reset)
  dead purge <id...> | --all         delete dead messages
Each takes --destination <name>: only that destination's messages ('default': those stored
without one, for the relay's own publisher).

Run 'outboxer help dead <list|retry|purge>' for details.`,
  'dead list': () => `Usage: outboxer dead list [--json] [--limit <n>] [--destination <name>] [options]

Lists dead messages, oldest first, one line each: id, topic, destination (default: the
relay's own publisher), type, key, attempts, dead at, and the reason, whole (without the
message's own id, shown first).
  --json                 a JSON array on stdout (every field as stored, ISO timestamps;
                         destination null for the relay's own publisher)
  --limit <n>            at most this many, 1..100000 (default 100)
  --destination <name>   only this destination's messages ('default': those stored without one)

${connection('dead list')}`,
  'dead retry': () => `Usage: outboxer dead retry <id...> | --all [--destination <name>] [options]

Moves the given dead messages (UUIDs) or every dead message back to pending with fresh
attempts, and prints how many moved. An audit line goes to stderr.
  --all                  every dead message (in bounded batches)
  --destination <name>   only this destination's messages ('default': those stored without one)

${connection('dead retry')}`,
  'dead purge': () => `Usage: outboxer dead purge <id...> | --all [--destination <name>] [options]

Deletes the given dead messages (UUIDs) or every dead message, and prints how many were
deleted. An audit line goes to stderr.
  --all                  every dead message (in bounded batches)
  --destination <name>   only this destination's messages ('default': those stored without one)

${connection('dead purge')}`,
  topics: () => `Usage: outboxer topics list|pause|resume [options]

  topics list [--json]                     list the paused topics: by operators, then by relays
  topics pause <topic> [--reason <text>]   every relay of the table holds its messages
  topics resume <topic>                    end the pause; held messages publish again

Pauses are kept in the database and shared by every relay of the table.
Run 'outboxer help topics <list|pause|resume>' for details.`,
  'topics list': () => `Usage: outboxer topics list [--json] [options]

Lists the topics operators paused, oldest pause first, then the topics the relays hold by
themselves because their destination is missing (no queue bound, no exchange or stream; read
from the held messages, earliest first; they resume by themselves once it exists): topic,
paused by (operator or relay), paused at, reason.
  --json                 a JSON array on stdout (topic, pausedBy, reason, pausedAt as an ISO
                         timestamp; held, the messages held, on a relay's pause)

${connection('topics list')}`,
  'topics pause': () => `Usage: outboxer topics pause <topic> [--reason <text>] [options]

Pauses a topic for every relay of the table: within about 5 s each relay holds its messages
(pending, attempts not counted, key order kept) until 'outboxer topics resume'. A topic paused
already keeps its first reason and time (exit 0). An audit line goes to stderr.
  --reason <text>        why (at most 500 bytes, one line): listed with the pause, and shown
                         in the held messages' last error

${connection('topics pause')}`,
  'topics resume': () => `Usage: outboxer topics resume <topic> [options]

Ends an operator's pause: the held messages publish as their holds run out (within about
5 s plus the relays' --max-error-backoff-ms, plus a poll). A topic not paused is no error
(exit 0). An audit line goes to stderr.

${connection('topics resume')}`,
  destinations: () => `Usage: outboxer destinations list|pause|resume [options]

  destinations list [--json]                    list the destinations operators paused
  destinations pause <name> [--reason <text>]   every relay holds the destination's messages
  destinations resume <name>                    end the pause; held messages publish again

A destination is paused as a whole: every topic of it, while the other destinations keep
flowing. 'default' names the relay's own publisher (messages stored without a destination).
Pauses are kept in the database and shared by every relay of the table.
Run 'outboxer help destinations <list|pause|resume>' for details.`,
  'destinations list': () => `Usage: outboxer destinations list [--json] [options]

Lists the destinations operators paused, oldest pause first: destination, paused at, reason.
(Destinations the relays hold by themselves, their broker out of reach, show in the relays'
health and in 'outboxer topics list' as held topics.)
  --json                 a JSON array on stdout (destination, reason, pausedAt as an ISO timestamp)

${connection('destinations list')}`,
  'destinations pause': () => `Usage: outboxer destinations pause <name> [--reason <text>] [options]

Pauses a whole destination for every relay of the table: within about 5 s each relay holds
its messages, every topic of it (pending, attempts not counted, key order kept), until
'outboxer destinations resume'; the other destinations keep flowing. 'default' pauses the
relay's own publisher. A destination paused already keeps its first reason and time (exit 0).
An audit line goes to stderr.
  --reason <text>        why (at most 500 bytes, one line): listed with the pause, and shown
                         in the held messages' last error

${connection('destinations pause')}`,
  'destinations resume': () => `Usage: outboxer destinations resume <name> [options]

Ends an operator's pause of a destination: the held messages publish in key order as their
holds run out (within about 5 s plus the relays' --max-error-backoff-ms, plus a poll). A
destination not paused is no error (exit 0). An audit line goes to stderr.

${connection('destinations resume')}`,
});

export function helpText(topic: HelpTopic): string {
  return `${TEXTS[topic]()}\n`;
}

/** Where the help of `topic` is: `run 'outboxer help relay' for its options`. */
export function helpPointer(topic: HelpTopic): string {
  if (topic === 'main') return "run 'outboxer help' for the commands";
  return `run 'outboxer help ${topic}' for its ${topic === 'dead' || topic === 'topics' || topic === 'destinations' || topic === 'pending' ? 'subcommands' : 'options'}`;
}

/**
 * What a usage error prints after its message: by default the command's usage line and where its options are
 * listed, so that the message stays in view (the whole help is 20 to 60 lines).
 */
export function usageAfterError(topic: HelpTopic, shown: UsageShown): string {
  if (shown === 'none') return '';
  if (shown === 'full') return `\n${helpText(topic)}`;
  const [usage] = TEXTS[topic]().split('\n');
  const pointer = helpPointer(topic);
  return `${usage}\n${pointer.charAt(0).toUpperCase()}${pointer.slice(1)}.\n`;
}
