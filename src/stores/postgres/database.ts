import { OutboxerError } from '../../core/errors.js';
/** The shape of a query result shared by `pg` (rowCount) and PGlite (affectedRows). */
export interface QueryResultLike {
  readonly rows: readonly unknown[];
  readonly rowCount?: number | null;
  readonly affectedRows?: number;
  /** The command tag (`pg`): `ROLLBACK` answering a `COMMIT` means the transaction had failed and nothing was committed. */
  readonly command?: string;
}

/**
 * A `COMMIT` that rolled back: an error inside the transaction was caught and not rethrown (PostgreSQL then ignores
 * every statement until the end of the transaction, and answers `COMMIT` with `ROLLBACK`). Thrown so that nobody
 * reports as committed what was not: an inbox would otherwise ack messages whose effects are gone.
 */
export function rolledBackAtCommit(): OutboxerError {
  return new OutboxerError(
    'OUTBOXER_NOT_IN_TRANSACTION',
    'the transaction had failed before its COMMIT (an error inside it was caught and not rethrown), so PostgreSQL rolled it back and nothing it wrote was committed; let database errors propagate out of the transaction, or catch them inside a SAVEPOINT',
  );
}

/**
 * Anything that can run a parameterized query: a `pg` Client or PoolClient inside BEGIN,
 * a `pg` Pool, a PGlite instance or a PGlite transaction. Enqueue takes one of these.
 */
export interface SqlExecutor {
  query(text: string, params?: unknown[]): Promise<QueryResultLike>;
}

/** What the relay side of the store needs from a database: queries and its own short transactions. */
export interface PgDatabase extends SqlExecutor {
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /** Runs a named (prepared) statement; present where the driver keeps them per connection (`fromPgPool`). */
  queryNamed?(statement: { readonly name: string; readonly text: string }, params: unknown[]): Promise<QueryResultLike>;
  /**
   * Runs `work` on one connection, outside any transaction, with no time limit on its statements (index builds
   * run for minutes); a session advisory lock taken in it is held until released. Absent on handles that
   * cannot keep one connection (then indexes are built plainly, in a transaction).
   */
  session?<T>(work: (session: SqlExecutor) => Promise<T>): Promise<T>;
  /** Ends the connections this handle owns; a no-op for handles over a caller's pool. */
  close(): Promise<void>;
}

export function affectedRows(result: QueryResultLike): number {
  return result.rowCount ?? result.affectedRows ?? 0;
}

interface PgPoolClientLike extends SqlExecutor {
  query(text: string, params?: unknown[]): Promise<QueryResultLike>;
  query(config: { text: string; values?: unknown[]; query_timeout?: number }): Promise<QueryResultLike>;
  release(error?: Error | boolean): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
  removeListener(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * A checked-out `pg` client has no `error` listener (the pool listens only while it is idle), so a backend
 * killed between two of its queries would throw from the socket and end the process. While we hold it, the
 * error marks it broken: the next query fails as a rejected promise, and the client is not reused.
 */
async function withClient<T>(pool: PgPoolLike, work: (client: PgPoolClientLike, broken: { value: boolean }) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  const broken = { value: false };
  const onError = () => {
    broken.value = true;
  };
  client.on('error', onError);
  try {
    return await work(client, broken);
  } finally {
    client.removeListener('error', onError);
    client.release(broken.value);
  }
}

/** node-postgres treats a `query_timeout` of 0 as "the pool's", so "none" is the longest timer Node allows. */
const NO_CLIENT_TIMEOUT_MS = 2 ** 31 - 1;

/** Structural view of a `pg` Pool: no runtime import of `pg` is needed. */
export interface PgPoolLike extends SqlExecutor {
  query(text: string, params?: unknown[]): Promise<QueryResultLike>;
  query(config: { name: string; text: string; values: unknown[] }): Promise<QueryResultLike>;
  connect(): Promise<PgPoolClientLike>;
  end(): Promise<void>;
}

/** Wraps a `pg` Pool. `ownsPool` makes `close()` end it (the CLI does; a library user keeps theirs). */
export function fromPgPool(pool: PgPoolLike, options: { ownsPool?: boolean } = {}): PgDatabase {
  return {
    query: (text, params) => pool.query(text, params),
    queryNamed: (statement, params) => pool.query({ name: statement.name, text: statement.text, values: params }),
    transaction: (work) =>
      withClient(pool, async (client, broken) => {
        await client.query('BEGIN');
        try {
          const result = await work(client);
          const committed = await client.query('COMMIT');
          if (committed.command === 'ROLLBACK') throw rolledBackAtCommit();
          return result;
        } catch (error) {
          await client.query('ROLLBACK').catch(() => {
            broken.value = true;
          });
          throw error;
        }
      }),
    session: (work) =>
      withClient(pool, async (client, broken) => {
        const unbounded: SqlExecutor = {
          query: (text, values) => client.query({ text, ...(values === undefined ? {} : { values }), query_timeout: NO_CLIENT_TIMEOUT_MS }),
        };
        try {
          await unbounded.query('SET statement_timeout = 0');
          const result = await work(unbounded);
          await unbounded.query('RESET statement_timeout');
          return result;
        } catch (error) {
          broken.value = true;
          throw error;
        }
      }),
    async close() {
      if (options.ownsPool === true) await pool.end();
    },
  };
}
