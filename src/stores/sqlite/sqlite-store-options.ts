import { z } from 'zod';
import { parseOptions, wholeNumber } from '../../core/parse-options.js';
import { DEFAULT_PARTITION_COUNT } from '../shared/partition-count.js';
import { sqliteTableNames, type SqliteTableNames } from './table-names.js';

export interface SqliteStoreOptions {
  /** Name of the outbox table (its side tables are named after it). Default `outbox`. */
  readonly table?: string;
  /**
   * How long published rows are kept, in ms. 0 (the default) deletes a row as soon as its publish is confirmed;
   * a positive value keeps it with state `published` until `purgePublished` (the relay's housekeeping) removes it.
   */
  readonly retainPublishedMs?: number;
  /** How long an enqueue's idempotency key is remembered, in ms. Default 24 h. */
  readonly idempotencyWindowMs?: number;
  /** The partitions of a table `migrate` creates (1 to 1024, default 64); fixed from then on, ignored for an existing table. */
  readonly partitionCount?: number;
}

export interface ResolvedSqliteStoreOptions {
  /** The table, validated as an identifier (`OUTBOXER_INVALID_IDENTIFIER`), and every name derived from it. */
  readonly tableNames: SqliteTableNames;
  readonly retainPublishedMs: number;
  readonly idempotencyWindowMs: number;
  readonly partitionCount: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

const sqliteStoreOptionsSchema = z
  .object({
    table: z.string({ error: 'must be a string: an identifier such as outbox' }).default('outbox'),
    retainPublishedMs: wholeNumber(0, Number.MAX_SAFE_INTEGER, 'ms', '(0 deletes rows once published)').default(0),
    idempotencyWindowMs: wholeNumber(1, Number.MAX_SAFE_INTEGER, 'ms').default(DAY_MS),
    partitionCount: wholeNumber(1, 1024).default(DEFAULT_PARTITION_COUNT),
  })
  .strict();

/** Resolves the store's options once: documented defaults, validated, frozen. Invalid → ConfigurationError naming the option. */
export function resolveSqliteStoreOptions(input: SqliteStoreOptions = {}): ResolvedSqliteStoreOptions {
  const options = parseOptions(sqliteStoreOptionsSchema, input, 'sqlite store');
  return Object.freeze({
    tableNames: sqliteTableNames(options.table),
    retainPublishedMs: options.retainPublishedMs,
    idempotencyWindowMs: options.idempotencyWindowMs,
    partitionCount: options.partitionCount,
  });
}
