import { OutboxerError } from '../../core/errors.js';

/**
 * The structural views of `better-sqlite3` the store needs: no runtime import here, so the subpath loads without
 * it and the types do not depend on its version.
 */
export interface SqliteStatementLike {
  /** Whether the statement returns rows (better-sqlite3 sets it). */
  readonly reader?: boolean;
  run(...params: unknown[]): { readonly changes: number; readonly lastInsertRowid: number | bigint };
  all(...params: unknown[]): unknown[];
  get(...params: unknown[]): unknown;
}

/** A `better-sqlite3` Database. */
export interface SqliteHandle {
  prepare(sql: string): SqliteStatementLike;
  exec(sql: string): unknown;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  readonly inTransaction: boolean;
  readonly open: boolean;
  readonly name: string;
  close(): unknown;
}

/** How long a write waits for another connection's write (several processes on one file), in all. */
export const DEFAULT_BUSY_WAIT_MS = 5000;

/**
 * One SQLite connection for the store: statements are cached per text, and writes run in `BEGIN IMMEDIATE`
 * transactions, one at a time per handle. While another connection writes (SQLITE_BUSY), a write waits with
 * short synchronous waits (the busy timeout, 20 ms) between asynchronous pauses, so the event loop is never
 * blocked for long, up to `busyWaitMs` in all.
 */
export class SqliteDatabase {
  readonly handle: SqliteHandle;
  readonly busyWaitMs: number;
  readonly #owns: boolean;
  readonly #statements = new Map<string, SqliteStatementLike>();
  #queue: Promise<unknown> = Promise.resolve();

  constructor(handle: SqliteHandle, options: { readonly ownsHandle?: boolean; readonly busyWaitMs?: number } = {}) {
    this.handle = handle;
    this.#owns = options.ownsHandle === true;
    this.busyWaitMs = options.busyWaitMs ?? DEFAULT_BUSY_WAIT_MS;
  }

  /** A cached prepared statement. */
  statement(sql: string): SqliteStatementLike {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.handle.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  all(sql: string, params: readonly unknown[] = []): Record<string, unknown>[] {
    return this.statement(sql).all(...params) as Record<string, unknown>[];
  }

  get(sql: string, params: readonly unknown[] = []): Record<string, unknown> | undefined {
    return this.statement(sql).get(...params) as Record<string, unknown> | undefined;
  }

  run(sql: string, params: readonly unknown[] = []): number {
    return this.statement(sql).run(...params).changes;
  }

  /**
   * Runs synchronous reads after this handle's earlier work, and never inside a transaction someone else left
   * open on this connection (their uncommitted rows would be visible): it waits until that one ends.
   */
  read<T>(work: () => T): Promise<T> {
    return this.#serialized(async () => {
      await this.#outsideForeignTransaction();
      // a BEGIN elsewhere may have run between that check's last look and this microtask: look again, synchronously
      while (this.handle.inTransaction) await this.#outsideForeignTransaction();
      return work();
    });
  }

  /**
   * Runs synchronous `work` in a `BEGIN IMMEDIATE` transaction (committed when it returns, rolled back when it
   * throws), after this handle's earlier writes, waiting out other connections' writes as described above.
   */
  write<T>(work: () => T): Promise<T> {
    return this.#serialized(async () => {
      await this.#begin();
      try {
        const result = work();
        this.handle.exec('COMMIT');
        return result;
      } catch (error) {
        if (this.handle.inTransaction) this.handle.exec('ROLLBACK');
        throw error;
      }
    });
  }

  /**
   * Runs asynchronous `work` in a `BEGIN IMMEDIATE` transaction on this handle (the caller's transaction for
   * `outbox.transaction`). Other writes through this handle wait until it ends; code that uses the same
   * connection without it while `work` awaits runs inside the transaction, as SQLite has one per connection.
   */
  transaction<T>(work: (tx: SqliteHandle) => Promise<T>): Promise<T> {
    return this.#serialized(async () => {
      await this.#begin();
      try {
        const result = await work(this.handle);
        this.handle.exec('COMMIT');
        return result;
      } catch (error) {
        if (this.handle.inTransaction) this.handle.exec('ROLLBACK');
        throw error;
      }
    });
  }

  async close(): Promise<void> {
    await this.#queue.catch(() => undefined);
    if (this.#owns && this.handle.open) this.handle.close();
  }

  #serialized<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(work, work);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** Resolves once no transaction is open on the connection; the caller starts its work in the same tick (no await between). */
  async #outsideForeignTransaction(): Promise<void> {
    if (!this.handle.inTransaction) return;
    const deadline = Date.now() + this.busyWaitMs;
    for (let pause = 1; this.handle.inTransaction; pause = Math.min(pause * 2, 50)) {
      if (Date.now() >= deadline) {
        throw new OutboxerError(
          'OUTBOXER_LOCK_TIMEOUT',
          `SQLite database ${this.handle.name}: a transaction opened on the store's own connection stayed open for ${this.busyWaitMs} ms; give the store a connection of its own`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  async #begin(): Promise<void> {
    await this.#outsideForeignTransaction();
    const deadline = Date.now() + this.busyWaitMs;
    for (let pause = 1; ; pause = Math.min(pause * 2, 50)) {
      if (this.handle.inTransaction) {
        await this.#outsideForeignTransaction();
        continue;
      }
      try {
        this.handle.exec('BEGIN IMMEDIATE');
        return;
      } catch (error) {
        if (!isBusy(error)) throw error;
        if (Date.now() >= deadline) {
          throw new OutboxerError(
            'OUTBOXER_LOCK_TIMEOUT',
            `SQLite database ${this.handle.name}: another connection kept writing for ${this.busyWaitMs} ms; raise busyWaitMs or shorten that connection's transactions`,
            { cause: error },
          );
        }
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }
}

export function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_BUSY_SNAPSHOT' || code === 'SQLITE_LOCKED';
}

/** The settings every connection of the store gets: WAL (readers never wait for the writer), a short busy timeout, foreign keys off. */
export function prepareConnection(handle: SqliteHandle): void {
  handle.pragma('busy_timeout = 20');
  const mode = handle.pragma('journal_mode = WAL', { simple: true });
  if (typeof mode === 'string' && mode.toLowerCase() !== 'wal' && handle.name !== ':memory:' && handle.name !== '') {
    throw new OutboxerError('OUTBOXER_INVALID_OPTION', `SQLite database ${handle.name} refused WAL mode (got ${mode}); relays in several processes need it`);
  }
}
