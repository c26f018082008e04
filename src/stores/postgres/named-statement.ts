import { createHash } from 'node:crypto';
import type { QueryResultLike, SqlExecutor } from './database.js';

/**
 * A statement with a stable server-side name derived from its text, so each connection parses and plans it
 * once; `prepare` is false for a statement whose best plan depends on the data and must be planned per call.
 */
export interface NamedStatement {
  readonly name: string;
  readonly text: string;
  readonly prepare: boolean;
}

export function namedStatement(text: string, prepare = true): NamedStatement {
  return Object.freeze({ name: `outboxer_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`, text, prepare });
}

/** Names every statement of a set built by `buildStatements`; those in `plannedPerCall` are never prepared. */
export function nameStatements<K extends string>(
  statements: Readonly<Record<K, string>>,
  plannedPerCall: readonly K[] = [],
): Readonly<Record<K, NamedStatement>> {
  const named = {} as Record<K, NamedStatement>;
  for (const key of Object.keys(statements) as K[]) named[key] = namedStatement(statements[key], !plannedPerCall.includes(key));
  return Object.freeze(named);
}

/** What can run a named (prepared) statement: our `fromPgPool` handle, or a node-postgres Client/PoolClient. */
interface NamedQueryRunner {
  queryNamed?(statement: NamedStatement, params: unknown[]): Promise<QueryResultLike>;
}

interface NodePostgresClientLike {
  query(config: { name: string; text: string; values: unknown[] }): Promise<QueryResultLike>;
}

/** node-postgres Clients (and PoolClients) carry these; PGlite and other executors do not. */
function isNodePostgresClient(executor: SqlExecutor): executor is SqlExecutor & NodePostgresClientLike {
  const candidate = executor as unknown as Record<string, unknown>;
  return typeof candidate.connectionParameters === 'object' && candidate.connectionParameters !== null && typeof candidate.connection === 'object';
}

/**
 * Runs `statement` as a prepared statement where the executor supports it and `prepare` is on, and as plain
 * parameterized text otherwise (PGlite, other executors, or poolers that cannot keep prepared statements).
 */
export function runStatement(executor: SqlExecutor, statement: NamedStatement, params: unknown[], prepare: boolean): Promise<QueryResultLike> {
  if (prepare && statement.prepare) {
    const runner = executor as SqlExecutor & NamedQueryRunner;
    if (typeof runner.queryNamed === 'function') return runner.queryNamed(statement, params);
    if (isNodePostgresClient(executor)) return executor.query({ name: statement.name, text: statement.text, values: params });
  }
  return executor.query(statement.text, params);
}
