import { ConfigurationError } from '../../../core/errors.js';
import { createJsonLogger } from '../../../core/logger.js';
import { escapeUnprintable } from '../../../core/printable.js';
import type { PendingMessage, PendingMessageDetail, PendingMessageOperator } from '../../../core/ports/pending-messages.js';
import { destinationFilter, shownDestination } from '../../destination-filter.js';
import { pendingMessageJson } from '../../pending-message-json.js';
import { writeAuditLine } from '../audit-line.js';
import type { CliConfig } from '../config.js';
import { openOperatorStore } from '../database.js';
import { CliFailure, EXIT_OK, UsageError } from '../errors.js';
import { humanDuration, printable, renderTable } from '../format.js';
import type { CliIo } from '../io.js';

/** Ids named one by one in an audit line; beyond this only the count is logged. */
const AUDIT_MAX_IDS = 100;
/** describeError bounds the errors the relay writes to 1000 characters; plain SQL could write more. */
const ERROR_MAX_LENGTH = 1000;

type PendingTools = Required<PendingMessageOperator>;

/** Runs `work` with the store's pending-message tools on one connection; a refusal of the store is a usage error (exit 2). */
async function withPendingTools<T>(config: CliConfig, io: CliIo, work: (tools: PendingTools) => Promise<T>): Promise<T> {
  const store = await openOperatorStore(config, createJsonLogger(config.logLevel, io.err));
  try {
    const { listPending, inspectPending, deletePending } = store;
    if (listPending === undefined || inspectPending === undefined || deletePending === undefined) {
      throw new CliFailure('OUTBOXER_NOT_SUPPORTED', 'this store has no pending-message tools (listPending, inspectPending, deletePending)');
    }
    return await work({ listPending: listPending.bind(store), inspectPending: inspectPending.bind(store), deletePending: deletePending.bind(store) });
  } catch (error) {
    if (error instanceof ConfigurationError) throw new UsageError(`${error.code}: ${error.message}`, config.command);
    throw error;
  } finally {
    await store.close();
  }
}

const where = (config: CliConfig) => `${config.schema}.${config.table}`;

/** `topic orders.created, key k-7, older than 600 s`: the filters given, for the summary line. */
function filtersOf(config: CliConfig): string {
  const { topic, key, olderThanSeconds } = config.pending ?? {};
  const parts = [
    topic === undefined ? '' : `topic ${printable(topic, 80)}`,
    config.destination === undefined ? '' : `destination ${config.destination}`,
    key === undefined ? '' : `key ${printable(key, 80)}`,
    olderThanSeconds === undefined ? '' : `older than ${olderThanSeconds} s`,
  ].filter((part) => part !== '');
  return parts.length === 0 ? '' : ` (${parts.join(', ')})`;
}

/** `-` while due, `now` once a schedule ran out, else `in 59s`: measured on the database clock (`createdAt + age`). */
function dueText(message: PendingMessage): string {
  if (message.dueAt === null) return '-';
  const dueInMs = message.dueAt.getTime() - (message.createdAt.getTime() + message.ageSeconds * 1000);
  return dueInMs <= 0 ? 'now' : `in ${humanDuration(Math.ceil(dueInMs / 1000))}`;
}

/** `outboxer pending list [--topic] [--key] [--older-than-s] [--destination] [--limit] [--json]`, in store order. */
export async function pendingListCommand(config: CliConfig, io: CliIo): Promise<number> {
  const { topic, key, olderThanSeconds } = config.pending ?? {};
  const destination = config.destination === undefined ? {} : { destination: destinationFilter(config.destination) };
  const listed = await withPendingTools(config, io, (tools) => tools.listPending({ limit: config.limit, topic, key, olderThanSeconds, ...destination }));
  if (config.json) {
    io.out(`${JSON.stringify(listed.map(pendingMessageJson), null, 2)}\n`);
    return EXIT_OK;
  }
  if (listed.length === 0) {
    io.out(`no pending messages in ${where(config)}${filtersOf(config)}\n`);
    return EXIT_OK;
  }
  const rows = listed.map((m) => [
    m.id,
    m.seq,
    printable(m.topic, 60),
    shownDestination(m.destination),
    m.key === null ? '-' : printable(m.key, 40),
    String(m.attempts),
    humanDuration(m.ageSeconds),
    dueText(m),
    // Last, and whole: the cause of a backoff or hold is never cut off.
    m.lastError === null ? '-' : printable(m.lastError, ERROR_MAX_LENGTH),
  ]);
  io.out(renderTable(['id', 'seq', 'topic', 'destination', 'key', 'attempts', 'age', 'due', 'last error'], rows, new Set([1, 5])));
  const more = listed.length === config.limit ? `; there may be more: raise --limit (now ${config.limit})` : '';
  io.out(`${listed.length} pending message(s)${filtersOf(config)}${more}\n`);
  return EXIT_OK;
}

/** `outboxer pending show <id> [--payload] [--json]`: one pending message; its content only with `--payload`. */
export async function pendingShowCommand(config: CliConfig, io: CliIo): Promise<number> {
  const [id] = config.ids;
  if (id === undefined) throw new UsageError("'pending show' needs the id of a pending message", config.command);
  const payload = config.pending?.payload === true;
  const message = await withPendingTools(config, io, (tools) => tools.inspectPending(id, { body: payload }));
  if (message === undefined) {
    throw new CliFailure(
      'OUTBOXER_NOT_FOUND',
      `no pending message ${id} in ${where(config)}: it was published, parked dead ('outboxer dead list'), deleted, or never stored`,
    );
  }
  // a body leaving the database is worth a line, as on the admin API: who read which message's content
  if (payload) writeAuditLine(config, io, 'pending.show', { id, changed: 0 }, 'pending message content shown');
  if (config.json) {
    io.out(`${JSON.stringify(pendingMessageJson(message), null, 2)}\n`);
    return EXIT_OK;
  }
  io.out(describe(message));
  return EXIT_OK;
}

/** The message as `name  value` lines, then its headers and body when shown. */
function describe(message: PendingMessageDetail): string {
  const due =
    message.dueAt === null
      ? "due (published in its key's turn)"
      : `scheduled until ${message.dueAt.toISOString()} (${dueText(message) === 'now' ? 'due now' : dueText(message)})`;
  const fields: [string, string][] = [
    ['id', message.id],
    ['seq', message.seq],
    ['topic', printable(message.topic, 300)],
    ['destination', shownDestination(message.destination)],
    ['type', printable(message.type, 300)],
    ['key', message.key === null ? '-' : printable(message.key, 600)],
    ['state', `pending, ${due}`],
    ['attempts', String(message.attempts)],
    ['last error', message.lastError === null ? '-' : printable(message.lastError, ERROR_MAX_LENGTH)],
    ['created at', `${message.createdAt.toISOString()} (${humanDuration(message.ageSeconds)} ago)`],
    ['content type', printable(message.contentType, 300)],
    ['headers', message.headerNames.length === 0 ? '-' : message.headerNames.map((name) => printable(name, 130)).join(', ')],
  ];
  const { content } = message;
  fields.push(['body', `${message.bodyBytes} bytes${content === undefined ? " (hidden: 'outboxer pending show --payload' prints it)" : ''}`]);
  const width = Math.max(...fields.map(([name]) => name.length));
  let text = fields.map(([name, value]) => `${name.padEnd(width)}  ${value}`).join('\n') + '\n';
  if (content === undefined) return text;
  const headers = Object.entries(content.headers);
  if (headers.length > 0) text += `\nheaders:\n${headers.map(([name, value]) => `  ${escapeUnprintable(name)}: ${escapeUnprintable(value)}`).join('\n')}\n`;
  // A JSON body as stored, line by line, control characters escaped; a binary body as base64.
  const body = typeof content.body === 'string' ? content.body.split('\n').map(escapeUnprintable).join('\n') : Buffer.from(content.body).toString('base64');
  return `${text}\nbody${typeof content.body === 'string' ? '' : ' (base64)'}:\n${body}\n`;
}

/** `outboxer pending delete <id...>`: the deletion, its count on stdout, an audit line on stderr. */
export async function pendingDeleteCommand(config: CliConfig, io: CliIo): Promise<number> {
  const { ids } = config;
  const deleted = await withPendingTools(config, io, (tools) => tools.deletePending(ids));
  writeAuditLine(config, io, 'pending.delete', { requested: ids.length, ids: ids.slice(0, AUDIT_MAX_IDS), changed: deleted }, 'pending messages deleted');
  io.out(`${deleted} of ${ids.length} requested pending message(s) deleted\n`);
  if (deleted < ids.length) {
    io.err(
      `outboxer pending delete: ${ids.length - deleted} of the given ids are not pending messages in ${where(config)} (unknown, published, dead, or deleted already)\n`,
    );
  }
  return EXIT_OK;
}
