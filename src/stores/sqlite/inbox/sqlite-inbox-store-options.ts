import { z } from 'zod';
import { parseOptions } from '../../../core/parse-options.js';

export interface SqliteInboxStoreOptions {
  /** Name of the inbox table. Default `outbox_inbox`. */
  readonly table?: string;
}

export interface ResolvedSqliteInboxStoreOptions {
  /** Validated as an identifier when the table names are built. */
  readonly table: string;
}

export const SQLITE_INBOX_DEFAULTS = Object.freeze({ table: 'outbox_inbox' });

const sqliteInboxStoreOptionsSchema = z.strictObject({
  table: z.string({ error: 'must be a string: an identifier such as outbox_inbox' }).default(SQLITE_INBOX_DEFAULTS.table),
});

/** Resolves the inbox store's options once: documented defaults, validated, frozen. Invalid → ConfigurationError naming the option. */
export function resolveSqliteInboxStoreOptions(input: SqliteInboxStoreOptions = {}): ResolvedSqliteInboxStoreOptions {
  return Object.freeze(parseOptions(sqliteInboxStoreOptionsSchema, input, 'inbox store'));
}
