import { createJsonLogger } from '../../../core/logger.js';
import type { DeadMessage } from '../../../core/message.js';
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

/** `outboxer dead list [--json] [--limit N]`, oldest first. */
export async function deadListCommand(config: CliConfig, io: CliIo): Promise<number> {
  const logger = createJsonLogger(config.logLevel, io.err);
  const store = await openOperatorStore(config, logger);
  let dead: DeadMessage[];
  try {
    dead = await store.listDead(config.limit);
  } finally {
    await store.close();
  }
  if (config.json) {
    const rows = dead.map((m) => ({ ...m, createdAt: m.createdAt.toISOString(), deadAt: m.deadAt.toISOString() }));
    io.out(`${JSON.stringify(rows, null, 2)}\n`);
    return EXIT_OK;
  }
  if (dead.length === 0) {
    io.out(`no dead messages in ${config.schema}.${config.table}\n`);
    return EXIT_OK;
  }
  const rows = dead.map((m) => [
    m.id,
    printable(m.topic, 60),
    printable(m.type, 40),
    m.key === null ? '-' : printable(m.key, 40),
    String(m.attempts),
    m.deadAt.toISOString(),
    // Last, and whole: one line per message, columns aligned, the cause never cut off.
    printable(shownReason(m), REASON_MAX_LENGTH),
  ]);
  io.out(renderTable(['id', 'topic', 'type', 'key', 'attempts', 'dead at', 'reason'], rows, new Set([4])));
  const more = dead.length === config.limit ? `; there may be more: raise --limit (now ${config.limit})` : '';
  io.out(`${dead.length} dead message(s)${more}\n`);
  return EXIT_OK;
}

/** `outboxer dead retry|purge <id...>|--all`: the mutation, its count on stdout, an audit line on stderr. */
export async function deadMutationCommand(config: CliConfig, io: CliIo, action: 'retry' | 'purge'): Promise<number> {
  const logger = createJsonLogger(config.logLevel, io.err);
  const target = config.all ? 'all' : config.ids;
  const store = await openOperatorStore(config, logger);
  let changed: number;
  try {
    changed = action === 'retry' ? await store.retryDead(target) : await store.purgeDead(target);
  } finally {
    await store.close();
  }
  writeAuditLine(
    config,
    io,
    `dead.${action}`,
    { requested: config.all ? 'all' : config.ids.length, ...(config.all ? {} : { ids: config.ids.slice(0, AUDIT_MAX_IDS) }), changed },
    `dead messages ${action === 'retry' ? 'moved back to pending' : 'deleted'}`,
  );
  const verb = action === 'retry' ? 'moved back to pending' : 'deleted';
  const of = config.all ? '' : ` of ${config.ids.length} requested`;
  io.out(`${changed}${of} dead message(s) ${verb}\n`);
  if (!config.all && changed < config.ids.length) {
    io.err(`outboxer dead ${action}: ${config.ids.length - changed} of the given ids are not dead messages in ${config.schema}.${config.table} (unknown, or not dead)\n`);
  }
  return EXIT_OK;
}
