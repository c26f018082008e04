/**
 * The transaction port: how a store reaches the caller's open transaction, whoever holds it (a driver's client,
 * an ORM's transaction object). An adapter (`fromKysely`, `fromPrisma`, ..., and the stores' own for raw driver
 * handles) is written once per ORM and works on every database that ORM speaks; the store does the rest.
 *
 * Contract (docs/design/ports.md, "The transaction port"):
 * - `query` runs one statement on the transaction's own connection, in the dialect's placeholder style
 *   (`$1` on PostgreSQL, `?` on MariaDB/MySQL and SQLite) with scalar parameters (string, number, bigint,
 *   boolean, null, Uint8Array; on PostgreSQL also arrays of those, bound as arrays), and resolves to plain rows
 *   keyed by column name. It never begins, commits or rolls back.
 * - `status` is what the driver or ORM knows of the transaction without a round trip: `'open'` (kept, for every
 *   statement the store then sends with `vouched: true`, by a same-tick check before the send), `'closed'`
 *   (committed, rolled back, or never begun), `'failed'` (PostgreSQL: aborted, waiting for ROLLBACK), or
 *   `undefined` when it cannot tell. Only `'open'` lets a store write without asking the database; on
 *   `undefined` the store proves the transaction open in the database itself (see `SqlDialect`), and on
 *   anything else it refuses with `OUTBOXER_NOT_IN_TRANSACTION`, naming `fix`. It may answer with a promise when
 *   the driver must ask (mysql2: the server status flags of a `DO 0`).
 */
export type SqlDialect = 'postgres' | 'mysql' | 'sqlite';

export type TransactionStatus = 'open' | 'closed' | 'failed';

/** A statement's outcome: the rows of a read (none for a write) and the rows a write changed. */
export interface SqlRows {
  readonly rows: readonly Record<string, unknown>[];
  readonly affectedRows: number;
}

/** Options of one statement. `name`: a stable name under which a driver that keeps them may prepare it. */
export interface SqlQueryOptions {
  readonly name?: string;
  /**
   * The store relies on `status()`'s `'open'` for this statement: the adapter confirms, synchronously in the same tick
   * in which it hands the statement to the driver's connection, that the transaction is still open, and throws
   * `OUTBOXER_NOT_IN_TRANSACTION` otherwise (a ROLLBACK queued after `status()` answered would run first, and the
   * statement commit on its own). An adapter that cannot confirm it so never answers `'open'`.
   */
  readonly vouched?: boolean;
}

export interface OutboxTransactionSpec<D extends SqlDialect> {
  readonly dialect: D;
  /** What the caller passed, for messages: `'a Kysely transaction'`, `'a pg client'`. */
  readonly source: string;
  /** How to pass an open transaction instead, for this ORM or driver: named in `OUTBOXER_NOT_IN_TRANSACTION`. */
  readonly fix: string;
  query(sql: string, params: readonly unknown[], options?: SqlQueryOptions): Promise<SqlRows>;
  status?(): TransactionStatus | undefined | Promise<TransactionStatus | undefined>;
}

const BRAND: unique symbol = Symbol.for('outboxer.transaction');

/** The caller's open transaction as a store takes it; made by `defineTransaction` (every adapter calls it). */
export interface OutboxTransaction<D extends SqlDialect = SqlDialect> extends OutboxTransactionSpec<D> {
  readonly [BRAND]: D;
}

/** Makes a transaction handle from an adapter's parts (frozen, branded so stores tell it from a raw driver handle). */
export function defineTransaction<D extends SqlDialect>(spec: OutboxTransactionSpec<D>): OutboxTransaction<D> {
  return Object.freeze({ ...spec, [BRAND]: spec.dialect });
}

export function isOutboxTransaction(value: unknown): value is OutboxTransaction {
  return typeof value === 'object' && value !== null && BRAND in value;
}
