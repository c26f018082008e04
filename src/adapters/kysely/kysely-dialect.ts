import { ConfigurationError } from '../../core/errors.js';
import type { SqlDialect } from '../../core/ports/outbox-transaction.js';

/**
 * The part of Kysely's query builder the detection calls. Kysely's own types for `selectNoFrom` depend on the
 * database type `DB`; a `Transaction<DB>` of any `DB` has this much of it.
 */
export interface SelectNoFromCompiler {
  selectNoFrom(selection: (eb: { val(value: number): { as(alias: string): unknown } }) => unknown): { compile(): { readonly sql: string } };
}

/**
 * What `select <one value> as "v"` compiles to under each query compiler outboxer writes for: the placeholder and
 * the identifier quote tell the dialects apart without naming a class (third-party dialects, such as kysely-neon,
 * kysely-postgres-js or a libSQL one, reuse these compilers).
 */
const COMPILED_PROBES: ReadonlyMap<string, SqlDialect> = new Map([
  ['select $1 as "v"', 'postgres'],
  ['select ? as `v`', 'mysql'],
  ['select ? as "v"', 'sqlite'],
]);

/**
 * The database of a Kysely transaction, from the SQL its own query compiler writes (compiling runs nothing).
 * Another database (Kysely's MSSQL dialect, say) is a `ConfigurationError` naming the supported ones.
 */
export function kyselyDialect(compiler: SelectNoFromCompiler): SqlDialect {
  const probe = compiler.selectNoFrom((eb) => eb.val(1).as('v')).compile().sql;
  const dialect = COMPILED_PROBES.get(probe);
  if (dialect !== undefined) return dialect;
  throw new ConfigurationError(
    'OUTBOXER_INVALID_OPTION',
    `fromKysely supports Kysely's PostgresDialect, MysqlDialect (MariaDB or MySQL) and SqliteDialect, and dialects that compile SQL as they do; ` +
      `this transaction's dialect compiles a one-value SELECT to ${JSON.stringify(probe.slice(0, 60))}`,
  );
}
