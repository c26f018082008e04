import { z } from 'zod';
import { parseOptions } from '../../../core/parse-options.js';
import type { TableName } from '../sql.js';
import { resolveInboxTableName } from './inbox-sql.js';

export interface PostgresInboxStoreOptions {
  /** Schema of the inbox table; created by `migrate` if missing. Default `public`. */
  readonly schema?: string;
  /** Name of the inbox table. Default `outbox_inbox`. */
  readonly table?: string;
  /**
   * Run the claim and the failure record as named prepared statements on node-postgres connections, so each
   * connection parses and plans them once. Default `true`. Turn it off behind a pooler that cannot keep prepared
   * statements across transactions (PgBouncer in transaction mode without `max_prepared_statements`). PGlite
   * ignores it.
   */
  readonly preparedStatements?: boolean;
}

export interface ResolvedPostgresInboxStoreOptions {
  /** Schema and table, validated as identifiers (`OUTBOXER_INVALID_IDENTIFIER`). */
  readonly tableName: TableName;
  readonly preparedStatements: boolean;
}

export const POSTGRES_INBOX_DEFAULTS = Object.freeze({ schema: 'public', table: 'outbox_inbox' });

const postgresInboxStoreOptionsSchema = z.strictObject({
  schema: z.string({ error: 'must be a string: an identifier such as public' }).default(POSTGRES_INBOX_DEFAULTS.schema),
  table: z.string({ error: 'must be a string: an identifier such as outbox_inbox' }).default(POSTGRES_INBOX_DEFAULTS.table),
  preparedStatements: z.boolean({ error: 'must be true or false' }).default(true),
});

/** Resolves the inbox store's options once: documented defaults, validated, frozen. Invalid → ConfigurationError naming the option. */
export function resolvePostgresInboxStoreOptions(input: PostgresInboxStoreOptions = {}): ResolvedPostgresInboxStoreOptions {
  const options = parseOptions(postgresInboxStoreOptionsSchema, input, 'inbox store');
  return Object.freeze({ tableName: resolveInboxTableName(options.schema, options.table), preparedStatements: options.preparedStatements });
}
