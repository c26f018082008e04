import type { UsageShown, HelpTopic } from './command-names.js';
import { ConfigurationError, OutboxerError } from '../../core/errors.js';
import { redactUrl } from '../../core/redact.js';

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** Wrong command line or configuration: exit 2, with the usage of `topic`. Its code: `OUTBOXER_USAGE`. */
export class UsageError extends OutboxerError {
  declare readonly code: 'OUTBOXER_USAGE';
  readonly topic: HelpTopic;
  readonly shown: UsageShown;

  constructor(message: string, topic: HelpTopic = 'main', shown: UsageShown = 'line') {
    super('OUTBOXER_USAGE', message);
    this.name = 'UsageError';
    this.topic = topic;
    this.shown = shown;
  }
}

/** The codes a CliFailure is thrown with (docs/errors.md, "The CLI"). */
export type CliFailureCode = 'OUTBOXER_INVALID_OPTION' | 'OUTBOXER_MISSING_DEPENDENCY' | 'OUTBOXER_NOT_FOUND' | 'OUTBOXER_NOT_SUPPORTED';

/** A runtime failure the CLI already explained in one line: exit 1. */
export class CliFailure extends OutboxerError {
  declare readonly code: CliFailureCode;

  constructor(code: CliFailureCode, message: string) {
    super(code, message);
    this.name = 'CliFailure';
  }
}

export interface FailureTarget {
  readonly what: string;
  readonly urls: readonly string[];
}

/**
 * Marks which server a failure concerns (the broker rather than the database), for the one-line message. Only a
 * wrapper: its code is `OUTBOXER_TARGETED_FAILURE`, and the line shows its cause's code and message instead.
 */
export class TargetedFailure extends OutboxerError {
  declare readonly code: 'OUTBOXER_TARGETED_FAILURE';
  readonly target: FailureTarget;

  constructor(cause: unknown, target: FailureTarget) {
    super('OUTBOXER_TARGETED_FAILURE', 'targeted failure', { cause });
    this.name = 'TargetedFailure';
    this.target = target;
  }
}

export function isUsageError(error: unknown): boolean {
  return error instanceof UsageError || error instanceof ConfigurationError;
}

/** Hints for the failures operators meet most, by driver or outboxer code. */
const HINTS: Readonly<Record<string, string>> = Object.freeze({
  ECONNREFUSED: 'is the server running and the port right?',
  ENOTFOUND: 'the host name does not resolve',
  ETIMEDOUT: 'the server did not answer in time',
  '28P01': 'authentication failed: check the user and password',
  '28000': 'the server refused this user or host (pg_hba.conf)',
  '3D000': 'the database does not exist',
  '42P01': "the outbox table does not exist: run 'outboxer migrate' (or check --schema/--table)",
  '3F000': "the schema does not exist: run 'outboxer migrate' (or check --schema)",
  EADDRINUSE: 'another process listens on that port: choose another --http-port',
  EADDRNOTAVAIL: '--http-host is not an address of this machine',
  EACCES: 'ports below 1024 need privileges: choose a higher --http-port',
  ERR_MODULE_NOT_FOUND: 'an optional peer dependency is missing: install it next to outboxer',
  OUTBOXER_DATABASE_UNAVAILABLE: 'is the server running, and are the host and port right?',
  OUTBOXER_LOCK_TIMEOUT: 'from the CLI: --lock-timeout-ms and --lock-attempts',
  OUTBOXER_RESIZE_TIMEOUT: "from the CLI: the same 'outboxer migrate --partitions N' waits on, 'outboxer migrate --cancel-resize' abandons it",
  OUTBOXER_RESIZE_IN_PROGRESS: "from the CLI: 'outboxer migrate --cancel-resize'",
});

function codeOf(error: unknown): string {
  if (error instanceof OutboxerError) return error.code;
  if (typeof error === 'object' && error !== null) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code !== '') return code;
    if (typeof code === 'number') return String(code);
  }
  return error instanceof Error ? error.name : 'ERROR';
}

function messageOf(error: unknown): string {
  if (error instanceof AggregateError && error.message === '') {
    return error.errors.map((inner: unknown) => messageOf(inner)).join('; ');
  }
  if (error instanceof Error) return error.message;
  return `non-error thrown: ${typeof error}`;
}

/**
 * One line for a failed command: code, message (collapsed, bounded) and where, with the URL redacted.
 * The caller's writer scrubs secrets again, so a driver message that echoes a password is covered too.
 */
export function describeFailure(command: string, failure: unknown, fallbackTarget?: FailureTarget): string {
  const error = failure instanceof TargetedFailure ? failure.cause : failure;
  const target = failure instanceof TargetedFailure ? failure.target : fallbackTarget;
  const code = codeOf(error);
  const message = messageOf(error).replace(/\s+/g, ' ').trim().slice(0, 500);
  const hint = HINTS[code];
  const where = target === undefined || target.urls.length === 0 ? '' : ` (${target.what} ${target.urls.map(redactUrl).join(',')})`;
  return `outboxer ${command}: ${code}: ${message}${where}${hint === undefined ? '' : `; ${hint}`}`;
}

/** The table lacks a migration a command needs (`OUTBOXER_NOT_MIGRATED`): `what` says which, the message how to add it. */
export function tableNotMigrated(config: { readonly schema: string; readonly table: string }, what: string): OutboxerError {
  return new OutboxerError(
    'OUTBOXER_NOT_MIGRATED',
    `outbox table "${config.schema}"."${config.table}" is not migrated (${what}): run 'outboxer migrate' with the same schema and table (or store.migrate(), or apply 'outboxer sql')`,
  );
}
