import type { CompiledQuery, DatabaseConnection, RawNode } from 'kysely';
import type { TransactionStatus } from '../../core/ports/outbox-transaction.js';

/** Whether each connection runs a statement within its `executeQuery` call, learned at the first look. */
const synchronousConnections = new WeakMap<DatabaseConnection, boolean>();

/**
 * SQLite's own word on the connection's transaction, asked and answered within this call: `BEGIN` fails inside a
 * transaction; outside one it begins one, rolled back in the same call, before anything else can run on the
 * connection. Only for a connection that runs statements as it is called (Kysely's SqliteDialect over better-sqlite3):
 * the caller hands its own statement to the same connection right after, in the same tick, so no ROLLBACK queued
 * meanwhile can come between. `undefined` for any other connection (it could not be asked without that race).
 */
export function sqliteTransactionState(connection: DatabaseConnection): Exclude<TransactionStatus, 'failed'> | undefined {
  if (!runsStatementsAsCalled(connection)) return undefined;
  try {
    void connection.executeQuery(rawQuery('BEGIN'));
  } catch (error) {
    if (/within a transaction/i.test(error instanceof Error ? error.message : '')) return 'open';
    throw error;
  }
  void connection.executeQuery(rawQuery('ROLLBACK'));
  return 'closed';
}

/**
 * Kysely's own SQLite connection (better-sqlite3 underneath) runs a statement before `executeQuery` returns, so a
 * statement that cannot be compiled throws from the call itself; on any other connection it would reject later.
 * Looked at once per connection, with a statement that runs nowhere.
 */
function runsStatementsAsCalled(connection: DatabaseConnection): boolean {
  let known = synchronousConnections.get(connection);
  if (known !== undefined) return known;
  known = false;
  if (connection.constructor.name === 'SqliteConnection') {
    try {
      connection.executeQuery(rawQuery('outboxer: not a statement')).catch(() => undefined);
    } catch {
      known = true;
    }
  }
  synchronousConnections.set(connection, known);
  return known;
}

/** The statement as `CompiledQuery.raw(sql, params)` builds it, without loading Kysely at run time. */
export function rawQuery(sql: string, parameters: readonly unknown[] = []): CompiledQuery {
  const node: RawNode = Object.freeze({ kind: 'RawNode', sqlFragments: Object.freeze([sql]), parameters: Object.freeze([]) });
  return Object.freeze({ sql, parameters: Object.freeze([...parameters]), query: node, queryId: RAW_QUERY_ID });
}

/** Kysely hands the id only to plugins, which these statements run without. */
const RAW_QUERY_ID = Object.freeze({ queryId: 'outboxer' });
