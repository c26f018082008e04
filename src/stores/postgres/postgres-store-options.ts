import { z } from 'zod';
import { parseOptions, wholeNumber } from '../../core/parse-options.js';
import { resolveTableName, type TableName } from './sql.js';

export interface PostgresStoreOptions {
  /** Schema of the outbox table; created by `migrate` if missing. Default `public`. */
  readonly schema?: string;
  /** Name of the outbox table. Default `outbox`. */
  readonly table?: string;
  /**
   * How long published rows are kept, in ms. 0 (the default) deletes a row as soon as its publish is
   * confirmed, which keeps the table small; a positive value keeps it with state `published`
   * until `purgePublished` (the relay's housekeeping) removes it.
   */
  readonly retainPublishedMs?: number;
  /** How long an enqueue's idempotency key is remembered, in ms. Default 24 h. */
  readonly idempotencyWindowMs?: number;
  /**
   * Run the store's statements as named prepared statements on node-postgres connections, so each connection
   * parses and plans them once. Default `true`. Turn it off behind a pooler that cannot keep prepared
   * statements across transactions (PgBouncer in transaction mode without `max_prepared_statements`).
   * PGlite ignores it.
   */
  readonly preparedStatements?: boolean;
}

export interface ResolvedPostgresStoreOptions {
  /** Schema and table, validated as identifiers (`OUTBOXER_INVALID_IDENTIFIER`). */
  readonly tableName: TableName;
  readonly retainPublishedMs: number;
  readonly idempotencyWindowMs: number;
  readonly preparedStatements: boolean;
}

const DAY_MS = 24 * 60 * 60 * 1000;

// Not strict: this store has always ignored options it does not know, and callers may rely on that.
const postgresStoreOptionsSchema = z.object({
  schema: z.string({ error: 'must be a string: an identifier such as public' }).default('public'),
  table: z.string({ error: 'must be a string: an identifier such as outbox' }).default('outbox'),
  retainPublishedMs: wholeNumber(0, Number.MAX_SAFE_INTEGER, 'ms', '(0 deletes rows once published)').default(0),
  idempotencyWindowMs: wholeNumber(1, Number.MAX_SAFE_INTEGER, 'ms').default(DAY_MS),
  preparedStatements: z.boolean({ error: 'must be true or false' }).default(true),
});

/** Resolves the store's options once: documented defaults, validated, frozen. Invalid → ConfigurationError naming the option. */
export function resolvePostgresStoreOptions(input: PostgresStoreOptions = {}): ResolvedPostgresStoreOptions {
  const options = parseOptions(postgresStoreOptionsSchema, input, 'postgres store');
  return Object.freeze({
    tableName: resolveTableName(options.schema, options.table),
    retainPublishedMs: options.retainPublishedMs,
    idempotencyWindowMs: options.idempotencyWindowMs,
    preparedStatements: options.preparedStatements,
  });
}
