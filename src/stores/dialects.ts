import { ConfigurationError } from '../core/errors.js';
import type { StoreDialect } from '../core/ports/store-dialect.js';

/** A database the CLI speaks to: its URL schemes, and its dialect, loaded only when a URL names it. */
export interface DialectEntry {
  readonly name: string;
  /** With their colon: `postgres:`. */
  readonly schemes: readonly string[];
  /** How a URL of this database starts, for messages: `postgres://…`, `sqlite:<file>`. */
  readonly example: string;
  load(): Promise<StoreDialect>;
}

/**
 * Every database of the package. A new one adds its entry here and its folder under src/stores; the CLI, the
 * daemon and the HTTP server read only this list (docs/design.md, "Layers, and what a new database or ORM adapter touches").
 */
export const STORE_DIALECTS: readonly DialectEntry[] = Object.freeze([
  {
    name: 'postgres',
    schemes: ['postgres:', 'postgresql:'],
    example: 'postgres://…',
    load: async () => (await import('./postgres/postgres-dialect.js')).postgresDialect,
  },
  {
    name: 'mysql',
    schemes: ['mysql:', 'mariadb:'],
    example: 'mysql://…',
    load: async () => (await import('./mysql/mysql-dialect.js')).mysqlDialect,
  },
  {
    name: 'sqlite',
    schemes: ['sqlite:'],
    example: 'sqlite:<file>',
    load: async () => (await import('./sqlite/sqlite-dialect.js')).sqliteDialect,
  },
]);

/** The dialect `outboxer sql` prints without a URL. */
export const DEFAULT_DIALECT = 'postgres';

/** Every scheme a database URL may have. */
export const DATABASE_SCHEMES: readonly string[] = Object.freeze(STORE_DIALECTS.flatMap((entry) => entry.schemes));

/** The entry of the URL's scheme; undefined URL: the default dialect's. */
export function dialectEntryOf(url: string | undefined): DialectEntry {
  const scheme = url === undefined ? undefined : url.slice(0, url.indexOf(':') + 1).toLowerCase();
  const entry = STORE_DIALECTS.find((candidate) => (scheme === undefined ? candidate.name === DEFAULT_DIALECT : candidate.schemes.includes(scheme)));
  if (entry === undefined) {
    const known = STORE_DIALECTS.map((candidate) => candidate.example).join(', ');
    throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `a database URL starts with one of ${known}; got ${scheme === '' ? 'no scheme' : scheme}`);
  }
  return entry;
}
