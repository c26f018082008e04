import { OutboxerError } from '../../core/errors.js';
import { defineTransaction, type OutboxTransaction } from '../../core/ports/outbox-transaction.js';
import type { SqliteHandle, SqliteStatementLike } from '../../stores/sqlite/database.js';
import type { BetterSqliteTransactionState } from './better-sqlite-transaction.js';
import type { TransactionDescription } from './postgres-transactions.js';

/** A better-sqlite3 statement: `reader` when it returns rows, `readonly` when it changes nothing. */
interface BetterSqliteStatement extends SqliteStatementLike {
  readonly reader: boolean;
  readonly readonly: boolean;
}

/** Prepared statements per connection, by text; bounded, as a connection may outlive many tables. */
const statements = new WeakMap<SqliteHandle, Map<string, BetterSqliteStatement>>();
const MAX_CACHED_STATEMENTS = 64;

/**
 * A transaction of `betterSqliteTransaction` as the store takes it: statements on its better-sqlite3 connection,
 * `'open'` while that transaction runs and the connection says it is inside one, `'closed'` once it ended.
 */
export function betterSqliteOutboxTransaction(state: BetterSqliteTransactionState, describe: TransactionDescription): OutboxTransaction<'sqlite'> {
  const { connection } = state;
  const open = () => !state.ended && connection.open && connection.inTransaction;
  return defineTransaction({
    dialect: 'sqlite',
    ...describe,
    async query(sql, params) {
      // better-sqlite3 runs the statement now, in this tick: checked here, the transaction is still the one it ran in
      if (!open()) throw ended(describe);
      const statement = statementOf(connection, sql);
      const values = params.map(bindable);
      if (statement.reader) {
        const rows = statement.all(...values) as Record<string, unknown>[];
        return { rows, affectedRows: statement.readonly ? 0 : rows.length };
      }
      return { rows: [], affectedRows: statement.run(...values).changes };
    },
    status: () => (open() ? 'open' : 'closed'),
  });
}

function statementOf(connection: SqliteHandle, sql: string): BetterSqliteStatement {
  let cached = statements.get(connection);
  if (cached === undefined) statements.set(connection, (cached = new Map<string, BetterSqliteStatement>()));
  let statement = cached.get(sql);
  if (statement === undefined) {
    statement = connection.prepare(sql) as BetterSqliteStatement;
    if (cached.size >= MAX_CACHED_STATEMENTS) cached.clear();
    cached.set(sql, statement);
  }
  return statement;
}

/** better-sqlite3 binds no booleans (SQLite stores them as 1 and 0), and Node Buffers as blobs. */
function bindable(value: unknown): unknown {
  if (typeof value === 'boolean') return Number(value);
  if (value instanceof Uint8Array && !Buffer.isBuffer(value)) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  return value;
}

function ended(describe: TransactionDescription): OutboxerError {
  return new OutboxerError(
    'OUTBOXER_NOT_IN_TRANSACTION',
    `enqueue was given ${describe.source} whose transaction already ended (committed or rolled back), so nothing was written. ${describe.fix}`,
  );
}
