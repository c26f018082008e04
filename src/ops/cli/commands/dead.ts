import { createJsonLogger } from '../../../core/logger.js';
import type { DeadMessage } from '../../../core/message.js';
import type { DestinationFilter } from '../../../core/ports/outbox-operator.js';
import { destinationFilter, shownDestination } from '../../destination-filter.js';
import { writeAuditLine } from '../audit-line.js';
import type { CliConfig } from '../config.js';
import { openOperatorStore } from '../database.js';
import { EXIT_OK } from '../errors.js';
import { printable, renderTable } from '../format.js';
import type { CliIo } from '../io.js';

/** Ids named one by one in an audit line; beyond this only the count is logged. */
const AUDIT_MAX_IDS = 100;
/** describeError bounds the reasons the relay writes to 1000 characters; plain SQL could write more. */
const REASON_MAX_LENGTH = 1000;

/**
 * A reason as the table shows it. Publishers name the message first (`message <id> is larger than ...`);
 * the row already shows the id, and repeating it pushed the cause out of view.
 */
function shownReason(message: DeadMessage): string {
  const id = message.id.replace(/[^0-9a-f-]/gi, '');
  return message.reason.replace(new RegExp(`message ${id}`, 'gi'), 'the message').replace(new RegExp(id, 'gi'), 'this message');
}

/** The store's filter for `--destination`: none without the flag (every destination). */
function filterOf(config: CliConfig): DestinationFilter {
  return config.destination === undefined ? {} : { destination: destinationFilter(config.destination) };
}

/** ` (destination partner)`: the filter given, for the summary lines. */
function filterText(config: CliConfig): string {
  return config.destination === undefined ? '' : ` (destination ${config.destination})`;
}

/** `outboxer dead list [--json] [--limit N] [--destination <name>]`, oldest first. */
export async function deadListCommand(config: CliConfig, io: CliIo): Promise<number> {
  const logger = createJsonLogger(config.logLevel, io.err);
  const store = await openOperatorStore(config, logger);
  let dead: DeadMessage[];
  try {
    dead = await store.listDead(config.limit, filterOf(config));
  } finally {
    await store.close();
  }
  if (config.json) {
    // the destination as the store gives it: null for the relay's own publisher (`default`)
    const rows = dead.map((m) => ({ ...m, destination: m.destination ?? null, createdAt: m.createdAt.toISOString(), deadAt: m.deadAt.toISOString() }));
    io.out(`${JSON.stringify(rows, null, 2)}\n`);
    return EXIT_OK;
  }
  if (dead.length === 0) {
    io.out(`no dead messages in ${config.schema}.${config.table}${filterText(config)}\n`);
    return EXIT_OK;
  }
  const rows = dead.map((m) => [
    m.id,
    printable(m.topic, 60),
    shownDestination(m.destination),
    printable(m.type, 40),
    m.key === null ? '-' : printable(m.key, 40),
    String(m.attempts),
    m.deadAt.toISOString(),
    // Last, and whole: one line per message, columns aligned, the cause never cut off.
    printable(shownReason(m), REASON_MAX_LENGTH),
  ]);
  io.out(renderTable(['id', 'topic', 'destination', 'type', 'key', 'attempts', 'dead at', 'reason'], rows, new Set([5])));
  const more = dead.length === config.limit ? `; there may be more: raise --limit (now ${config.limit})` : '';
  io.out(`${dead.length} dead message(s)${filterText(config)}${more}\n`);
  return EXIT_OK;
}

/** `outboxer dead retry|purge <id...>|--all [--destination <name>]`: the mutation, its count on stdout, an audit line on stderr. */
export async function deadMutationCommand(config: CliConfig, io: CliIo, action: 'retry' | 'purge'): Promise<number> {
  const logger = createJsonLogger(config.logLevel, io.err);
  const target = config.all ? 'all' : config.ids;
  const store = await openOperatorStore(config, logger);
  let changed: number;
  try {
    changed = action === 'retry' ? await store.retryDead(target, filterOf(config)) : await store.purgeDead(target, filterOf(config));
  } finally {
    await store.close();
  }
  writeAuditLine(
    config,
    io,
    `dead.${action}`,
    {
      requested: config.all ? 'all' : config.ids.length,
      ...(config.all ? {} : { ids: config.ids.slice(0, AUDIT_MAX_IDS) }),
      ...(config.destination === undefined ? {} : { destination: config.destination }),
      changed,
    },
    `dead messages ${action === 'retry' ? 'moved back to pending' : 'deleted'}`,
  );
  const verb = action === 'retry' ? 'moved back to pending' : 'deleted';
  const of = config.all ? '' : ` of ${config.ids.length} requested`;
  const ofDestination = config.destination === undefined ? '' : ` of destination ${config.destination}`;
  io.out(`${changed}${of} dead message(s)${ofDestination} ${verb}\n`);
  if (!config.all && changed < config.ids.length) {
    const why = config.destination === undefined ? 'unknown, or not dead' : `unknown, not dead, or of another destination than ${config.destination}`;
    io.err(`outboxer dead ${action}: ${config.ids.length - changed} of the given ids are not dead messages in ${config.schema}.${config.table} (${why})\n`);
  }
  return EXIT_OK;
}
