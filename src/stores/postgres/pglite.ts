import type { PgDatabase, QueryResultLike, SqlExecutor } from './database.js';

/** Structural view of PGlite and of its transactions: no runtime import of PGlite is needed. */
export interface PgliteLike {
  query(text: string, params?: unknown[]): Promise<QueryResultLike>;
  exec(text: string): Promise<readonly QueryResultLike[]>;
}

/** A PGlite transaction: `closed` once it committed or rolled back. */
export interface PgliteTransactionLike extends PgliteLike {
  readonly closed: boolean;
  rollback(): Promise<void>;
}

export interface PgliteInstanceLike extends PgliteLike {
  transaction<T>(work: (tx: PgliteTransactionLike) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * Adapts a PGlite instance or transaction. A query without parameters may hold several statements
 * (as with `pg`'s simple query protocol), so it runs through `exec`.
 */
export function pgliteExecutor(db: PgliteLike): SqlExecutor {
  return {
    async query(text, params) {
      if (params === undefined) {
        const results = await db.exec(text);
        return results[results.length - 1] ?? { rows: [], affectedRows: 0 };
      }
      return db.query(text, params);
    },
  };
}

/** Wraps a PGlite instance for the store. `ownsDatabase` makes `close()` close it. */
export function fromPglite(db: PgliteInstanceLike, options: { ownsDatabase?: boolean } = {}): PgDatabase {
  const executor = pgliteExecutor(db);
  return {
    query: executor.query,
    // keeps what tells the store the transaction is open (`closed`, `rollback`) on the handle `work` gets
    transaction: (work) =>
      db.transaction((tx) =>
        work(
          Object.assign(pgliteExecutor(tx), {
            get closed() {
              return tx.closed;
            },
            rollback: () => tx.rollback(),
          }),
        ),
      ),
    session: (work) => work(executor),
    async close() {
      if (options.ownsDatabase === true) await db.close();
    },
  };
}

export { PostgresOutboxStore, type PostgresStoreOptions } from './postgres-store.js';
