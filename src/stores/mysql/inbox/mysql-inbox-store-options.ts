import { z } from 'zod';
import { parseOptions } from '../../../core/parse-options.js';

export interface MysqlInboxStoreOptions {
  /** Database of the inbox table (qualifies its name). Default: the connection's current database. */
  readonly database?: string;
  /** Name of the inbox table. Default `outbox_inbox`. */
  readonly table?: string;
}

export interface ResolvedMysqlInboxStoreOptions {
  /** Null: the connection's current database. Validated as an identifier when the table names are built. */
  readonly database: string | null;
  readonly table: string;
}

export const MYSQL_INBOX_DEFAULTS = Object.freeze({ table: 'outbox_inbox' });

const mysqlInboxStoreOptionsSchema = z.strictObject({
  database: z.string({ error: 'must be a string: a database name such as app' }).optional(),
  table: z.string({ error: 'must be a string: an identifier such as outbox_inbox' }).default(MYSQL_INBOX_DEFAULTS.table),
});

/** Resolves the inbox store's options once: documented defaults, validated, frozen. Invalid → ConfigurationError naming the option. */
export function resolveMysqlInboxStoreOptions(input: MysqlInboxStoreOptions = {}): ResolvedMysqlInboxStoreOptions {
  const options = parseOptions(mysqlInboxStoreOptionsSchema, input, 'inbox store');
  return Object.freeze({ database: options.database ?? null, table: options.table });
}
