import { isOutboxTransaction, type OutboxTransaction } from '../../../core/ports/outbox-transaction.js';
import type { SqliteDatabase, SqliteHandle, SqliteStatementLike } from '../database.js';
import { SQLITE_NOW_MS } from '../migrations.js';
import { sqliteTableNames } from '../table-names.js';
import { proveSqliteTransaction, toSqliteTransaction } from '../sqlite-transaction.js';
import { claimInTransaction } from '../../../core/inbox-claim.js';
import type { InboxClaim, InboxDeadEntry, InboxEntryRef, InboxFailureRecord, InboxStats, InboxStore } from '../../../core/ports/inbox-store.js';
import { runSqliteInboxMigrations, sqliteInboxMigrationScript, type SqliteInboxTableNames } from './inbox-migrations.js';
import { inboxDeadEntryOf } from '../../shared/inbox-dead-entry.js';
import { resolveSqliteInboxStoreOptions, type SqliteInboxStoreOptions } from './sqlite-inbox-store-options.js';

type EntryState = 'processed' | 'failed' | 'dead';

/**
 * The inbox in a SQLite file. Handlers get the better-sqlite3 connection inside the store's `BEGIN IMMEDIATE`
 * transaction and write their effects through it (`tx.prepare(...).run(...)`); copies handled concurrently
 * through one store (or several connections to the file) run one after the other.
 */
export class SqliteInboxStore implements InboxStore<SqliteHandle> {
  readonly tableNames: SqliteInboxTableNames;
  readonly #database: SqliteDatabase;
  readonly #sql: ReturnType<typeof buildStatements>;

  constructor(database: SqliteDatabase, options: SqliteInboxStoreOptions = {}) {
    const names = sqliteTableNames(resolveSqliteInboxStoreOptions(options).table);
    this.#database = database;
    this.tableNames = Object.freeze({ table: names.table, inbox: names.outbox, migrations: names.migrations });
    this.#sql = buildStatements(this.tableNames.inbox);
  }

  transaction<T>(work: (tx: SqliteHandle) => Promise<T>): Promise<T> {
    return this.#database.transaction(work);
  }

  /**
   * `tx`: the connection inside this store's own `transaction`, or a transaction of the port (an ORM's through its
   * adapter, see `withOrmTransactions`), refused unless its driver vouches for it or SQLite says it is inside a
   * transaction (the writer's `BEGIN` probe) before anything is written.
   */
  claim(tx: OutboxTransaction, entry: InboxEntryRef): Promise<InboxClaim>;
  // the handlers' own type last: `new Inbox(store, ...)` infers the handlers' `tx` from it
  claim(tx: SqliteHandle, entry: InboxEntryRef): Promise<InboxClaim>;
  async claim(tx: SqliteHandle | OutboxTransaction, entry: InboxEntryRef): Promise<InboxClaim> {
    if (!isOutboxTransaction(tx)) {
      const current = this.#ensure(tx, entry);
      if (current.state !== 'failed') return { state: current.state, attempts: current.attempts };
      this.#statement(tx, this.#sql.markProcessed).run(entry.consumer, entry.id);
      return { state: 'claimed', attempts: current.attempts + 1 };
    }
    return claimInTransaction(entry, async () => {
      const transaction = toSqliteTransaction(tx);
      const { vouched } = await proveSqliteTransaction(transaction);
      return this.#claimThrough({ query: (sql, params) => transaction.query(sql, params, { vouched }) }, entry);
    });
  }

  recordFailure(entry: InboxEntryRef, failure: { reason: string; maxAttempts: number; dead: boolean }): Promise<InboxFailureRecord> {
    return this.#database.write(() => {
      const current = this.#ensure(this.#database.handle, entry);
      if (current.state !== 'failed') return { state: current.state, attempts: current.attempts };
      const attempts = current.attempts + 1;
      const dead = failure.dead || attempts >= failure.maxAttempts;
      this.#database.run(this.#sql.markFailed, [failure.reason, dead ? 1 : 0, dead ? 1 : 0, entry.consumer, entry.id]);
      return { state: dead ? 'dead' : 'failed', attempts };
    });
  }

  purgeProcessed(olderThanMs: number, limit: number): Promise<number> {
    return this.#database.write(() => this.#database.run(this.#sql.purgeProcessed, [olderThanMs, limit]));
  }

  async stats(consumer?: string): Promise<InboxStats> {
    const row = await this.#database.read(() => this.#database.get(this.#sql.stats, [consumer ?? null, consumer ?? null]));
    return { processed: Number(row?.processed ?? 0), failed: Number(row?.failed ?? 0), dead: Number(row?.dead ?? 0) };
  }

  async listDead(consumer: string, limit: number): Promise<InboxDeadEntry[]> {
    const rows = await this.#database.read(() => this.#database.all(this.#sql.listDead, [consumer, limit]));
    return rows.map(inboxDeadEntryOf);
  }

  purgeDead(consumer: string, ids: readonly string[] | 'all'): Promise<number> {
    if (ids === 'all') return this.#database.write(() => this.#database.run(this.#sql.purgeAllDead, [consumer]));
    return this.#database.write(() => this.#database.run(this.#sql.purgeDead, [consumer, JSON.stringify(ids)]));
  }

  async migrate(): Promise<void> {
    await runSqliteInboxMigrations(this.#database, this.tableNames);
  }

  migrationSql(): string {
    return sqliteInboxMigrationScript(this.tableNames);
  }

  async close(): Promise<void> {
    await this.#database.close();
  }

  /**
   * Inside the write transaction (one writer per file, so nothing races it): the entry as it is, or a new one
   * inserted as a 'failed' placeholder with 0 attempts that the caller settles in the same transaction.
   */
  #ensure(tx: SqliteHandle, entry: InboxEntryRef): { state: EntryState; attempts: number } {
    const row = this.#statement(tx, this.#sql.stateOf).get(entry.consumer, entry.id) as { state: EntryState; attempts: number } | undefined;
    if (row !== undefined) return { state: row.state, attempts: Number(row.attempts) };
    this.#statement(tx, this.#sql.insertPlaceholder).run(entry.consumer, entry.id, entry.type, entry.topic, entry.key);
    return { state: 'failed', attempts: 0 };
  }

  /**
   * An ORM's transaction may have begun DEFERRED: its first statement here writes, so it takes the write lock at
   * once (waiting out other writers) on the newest snapshot, where a read first would take a snapshot that a
   * concurrent writer could make stale and fail the upgrade. The entry cannot be missing after that write in the
   * same transaction; if it is, the statements did not reach one connection, and nothing may be read as settled.
   */
  async #claimThrough(tx: Pick<OutboxTransaction<'sqlite'>, 'query'>, entry: InboxEntryRef): Promise<InboxClaim> {
    await tx.query(this.#sql.ensurePlaceholder, [entry.consumer, entry.id, entry.type, entry.topic, entry.key]);
    const [row] = (await tx.query(this.#sql.stateOf, [entry.consumer, entry.id])).rows;
    if (row === undefined)
      throw new Error(
        `inbox ${entry.consumer}: the entry of message ${entry.id}, written in this transaction, is not there: the transaction's statements did not run on one connection`,
      );
    const current = { state: row.state as EntryState, attempts: Number(row.attempts) };
    if (current.state !== 'failed') return { state: current.state, attempts: current.attempts };
    await tx.query(this.#sql.markProcessed, [entry.consumer, entry.id]);
    return { state: 'claimed', attempts: current.attempts + 1 };
  }

  #statement(tx: SqliteHandle, sql: string): SqliteStatementLike {
    return tx === this.#database.handle ? this.#database.statement(sql) : tx.prepare(sql);
  }
}

function buildStatements(t: string) {
  return Object.freeze({
    stateOf: `SELECT state, attempts FROM ${t} WHERE consumer = ? AND message_id = ?`,
    insertPlaceholder: `INSERT INTO ${t} (consumer, message_id, type, topic, "key", state, attempts) VALUES (?, ?, ?, ?, ?, 'failed', 0)`,
    ensurePlaceholder: `INSERT INTO ${t} (consumer, message_id, type, topic, "key", state, attempts) VALUES (?, ?, ?, ?, ?, 'failed', 0)
      ON CONFLICT (consumer, message_id) DO NOTHING`,
    markProcessed: `UPDATE ${t} SET state = 'processed', attempts = attempts + 1, processed_at = ${SQLITE_NOW_MS}, updated_at = ${SQLITE_NOW_MS}
      WHERE consumer = ? AND message_id = ?`,
    markFailed: `UPDATE ${t} SET attempts = attempts + 1, last_error = ?, updated_at = ${SQLITE_NOW_MS},
        state = CASE WHEN ? THEN 'dead' ELSE 'failed' END, dead_at = CASE WHEN ? THEN ${SQLITE_NOW_MS} END
      WHERE consumer = ? AND message_id = ?`,
    purgeProcessed: `DELETE FROM ${t} WHERE (consumer, message_id) IN (
        SELECT consumer, message_id FROM ${t}
        WHERE state = 'processed' AND processed_at < ${SQLITE_NOW_MS} - ? ORDER BY processed_at LIMIT ?)`,
    stats: `SELECT COALESCE(SUM(state = 'processed'), 0) AS processed, COALESCE(SUM(state = 'failed'), 0) AS failed,
        COALESCE(SUM(state = 'dead'), 0) AS dead
      FROM ${t} WHERE ? IS NULL OR consumer = ?`,
    listDead: `SELECT consumer, message_id AS id, type, topic, "key", attempts, COALESCE(last_error, '') AS reason, first_seen_at, dead_at
      FROM ${t} WHERE consumer = ? AND state = 'dead' ORDER BY dead_at, message_id LIMIT ?`,
    purgeDead: `DELETE FROM ${t} WHERE consumer = ? AND state = 'dead' AND message_id IN (SELECT value FROM json_each(?))`,
    purgeAllDead: `DELETE FROM ${t} WHERE consumer = ? AND state = 'dead'`,
  });
}
