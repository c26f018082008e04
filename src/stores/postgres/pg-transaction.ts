import { OutboxerError } from '../../core/errors.js';
import { defineTransaction, isOutboxTransaction, type OutboxTransaction } from '../../core/ports/outbox-transaction.js';
import { isPgClient, pgClientTransaction } from './pg-client.js';
import { checkDialect } from '../shared/open-transaction.js';
import type { QueryResultLike, SqlExecutor } from './database.js';

/** What the PostgreSQL store's writer takes: a driver's handle inside BEGIN ... COMMIT, or an adapter's transaction (its dialect checked at run time: an ORM adapter knows it only then). */
export type PgTransactionInput = SqlExecutor | OutboxTransaction;

export const PG_FIX =
  "Pass a pg client inside BEGIN ... COMMIT (const client = await pool.connect(); await client.query('BEGIN')), the tx of " +
  "outbox.transaction(fromPgPool(pool), async (tx) => ...), a PGlite transaction (db.transaction(async (tx) => ...)), or your ORM's " +
  'transaction through its adapter (fromKysely(trx), fromKnex(trx), fromDrizzle(tx), fromPrisma(tx), fromTypeOrm(manager), fromMikroOrm(em), fromSequelize(t)).';

/** A PGlite transaction (`db.transaction(async (tx) => ...)`): `closed` once it committed or rolled back. */
interface PgliteTransactionLike extends SqlExecutor {
  readonly closed: boolean;
  rollback(): Promise<void>;
}

function isPgliteTransaction(value: object): value is PgliteTransactionLike {
  const candidate = value as Partial<PgliteTransactionLike>;
  return typeof candidate.closed === 'boolean' && typeof candidate.rollback === 'function' && typeof candidate.query === 'function';
}

const rowsOf = (result: QueryResultLike) => ({ rows: result.rows as Record<string, unknown>[], affectedRows: result.rowCount ?? result.affectedRows ?? 0 });

/**
 * The caller's handle as a transaction of the port. A pg client vouches through the protocol's transaction
 * status (checked again in the tick each statement is queued); a PGlite transaction only says when it is closed;
 * any other executor is proven in the database by the writer's probe and guarded statements.
 */
export function toPgTransaction(input: unknown): OutboxTransaction<'postgres'> {
  if (typeof input !== 'object' || input === null) {
    throw new OutboxerError('OUTBOXER_NOT_IN_TRANSACTION', `enqueue was given ${input === null ? 'null' : typeof input} instead of a transaction. ${PG_FIX}`);
  }
  if (isOutboxTransaction(input)) return checkDialect(input, 'postgres');
  if (isPgClient(input)) return pgClientTransaction(input, { source: 'a pg client', fix: PG_FIX });
  const executor = input as SqlExecutor;
  if (typeof executor.query !== 'function') {
    throw new OutboxerError('OUTBOXER_NOT_IN_TRANSACTION', `enqueue was given an object that runs no queries instead of a transaction. ${PG_FIX}`);
  }
  const pglite = isPgliteTransaction(input) ? input : undefined;
  return defineTransaction({
    dialect: 'postgres',
    source: pglite === undefined ? 'a SQL executor' : 'a PGlite transaction',
    fix: PG_FIX,
    query: async (text, params) => rowsOf(await executor.query(text, [...params])),
    // closed once PGlite ended it; open is left to the database's proof, which no later ROLLBACK can fool
    ...(pglite === undefined ? {} : { status: () => (pglite.closed ? 'closed' : undefined) }),
  });
}
