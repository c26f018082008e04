/**
 * MikroORM 6's SQL drivers run a transaction on Knex: `em.getTransactionContext()` is the Knex transaction (its
 * "transactor") of `em.transactional(...)` or `em.begin()`. These are the parts of it the adapter reads, as
 * structural views: no runtime import of Knex or MikroORM.
 */

/** The client of a Knex transaction: it always hands out the one connection the transaction holds. */
export interface KnexTransactionClientLike {
  /** The Knex dialect's driver: `pg`, `mysql2`, `better-sqlite3`, `mariadb`, `sqlite3`, ... */
  readonly driverName: string;
  /** Resolves to the transaction's own driver connection (a `pg` Client, a mysql2 Connection, a better-sqlite3 Database). */
  acquireConnection(): Promise<unknown>;
}

/** A Knex transaction (`knex.transaction()`'s transactor, a savepoint's too). */
export interface KnexTransactionLike {
  readonly isTransaction: true;
  /** True from the moment its COMMIT, ROLLBACK (or a savepoint's RELEASE / ROLLBACK TO) was issued, or its outer transaction's. */
  isCompleted(): boolean;
  readonly client: KnexTransactionClientLike;
}

export function isKnexTransaction(value: unknown): value is KnexTransactionLike {
  if ((typeof value !== 'function' && typeof value !== 'object') || value === null) return false;
  const candidate = value as Partial<KnexTransactionLike>;
  const client = candidate.client as Partial<KnexTransactionClientLike> | undefined;
  return (
    candidate.isTransaction === true &&
    typeof candidate.isCompleted === 'function' &&
    typeof client?.driverName === 'string' &&
    typeof client.acquireConnection === 'function'
  );
}

/**
 * The transaction's driver connection, asked for once: Knex's transaction client holds it for the transaction's
 * life but hands it out only through a promise, so `current()` has it from the first microtask on.
 */
export function transactionConnection(transaction: KnexTransactionLike): { readonly ready: Promise<unknown>; current(): unknown } {
  let connection: unknown;
  const ready = transaction.client.acquireConnection().then((acquired) => {
    connection = acquired;
    return acquired;
  });
  // a failure is reported by the first statement that awaits `ready`
  ready.catch(() => undefined);
  return { ready, current: () => connection };
}
