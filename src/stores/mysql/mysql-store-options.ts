import { z } from 'zod';
import { parseOptions, wholeNumber } from '../../core/parse-options.js';
import { DEFAULT_PARTITION_COUNT, mysqlTableNames, type MysqlTableNames } from './table-names.js';

export interface MysqlStoreOptions {
  /** The database (schema) the tables live in. Default: the connection's current database. */
  readonly database?: string;
  /** Name of the outbox table. Default `outbox`. */
  readonly table?: string;
  /**
   * How long published rows are kept, in ms. 0 (the default) deletes a row as soon as its publish is confirmed;
   * a positive value keeps it with state `published` until `purgePublished` (the relay's housekeeping) removes it.
   */
  readonly retainPublishedMs?: number;
  /** How long an enqueue's idempotency key is remembered, in ms. Default 24 h. */
  readonly idempotencyWindowMs?: number;
  /** Partitions of a table `migrate` creates (1 to 1024, default 64); fixed once the table exists. */
  readonly partitionCount?: number;
}

export interface ResolvedMysqlStoreOptions {
  /** Table and database, validated as identifiers (`OUTBOXER_INVALID_IDENTIFIER`), and every name derived from them. */
  readonly tableNames: MysqlTableNames;
  readonly retainPublishedMs: number;
  readonly idempotencyWindowMs: number;
  readonly partitionCount: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

const mysqlStoreOptionsSchema = z
  .object({
    database: z.string({ error: 'must be a string: an identifier such as app' }).optional(),
    table: z.string({ error: 'must be a string: an identifier such as outbox' }).default('outbox'),
    retainPublishedMs: wholeNumber(0, Number.MAX_SAFE_INTEGER, 'ms', '(0 deletes rows once published)').default(0),
    idempotencyWindowMs: wholeNumber(1, Number.MAX_SAFE_INTEGER, 'ms').default(DAY_MS),
    partitionCount: wholeNumber(1, 1024).default(DEFAULT_PARTITION_COUNT),
  })
  .strict();

/** Resolves the store's options once: documented defaults, validated, frozen. Invalid → ConfigurationError naming the option. */
export function resolveMysqlStoreOptions(input: MysqlStoreOptions = {}): ResolvedMysqlStoreOptions {
  const options = parseOptions(mysqlStoreOptionsSchema, input, 'mysql store');
  return Object.freeze({
    tableNames: mysqlTableNames(options.table, options.database ?? null),
    retainPublishedMs: options.retainPublishedMs,
    idempotencyWindowMs: options.idempotencyWindowMs,
    partitionCount: options.partitionCount,
  });
}
