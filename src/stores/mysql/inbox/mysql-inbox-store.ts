import { isOutboxTransaction, type OutboxTransaction } from '../../../core/ports/outbox-transaction.js';
import { mysqlExecutor, type MysqlDatabase, type MysqlExecutor, type MysqlQueryable } from '../database.js';
import { MYSQL_NOW } from '../migrations.js';
import { toMysqlTransaction } from '../mysql-transaction.js';
import { proveMysqlTransaction } from '../prove-transaction.js';
import { mysqlTableNames } from '../table-names.js';
import { claimInTransaction } from '../../../core/inbox-claim.js';
import type { InboxClaim, InboxDeadEntry, InboxEntryRef, InboxFailureRecord, InboxStats, InboxStore } from '../../../core/ports/inbox-store.js';
import { mysqlInboxMigrationScript, runMysqlInboxMigrations, type MysqlInboxTableNames } from './inbox-migrations.js';
import { inboxDeadEntryOf } from '../../shared/inbox-dead-entry.js';
import { resolveMysqlInboxStoreOptions, type MysqlInboxStoreOptions } from './mysql-inbox-store-options.js';

type EntryState = 'processed' | 'failed' | 'dead';

const BULK_BATCH = 1000;
const AS_TEXT = (column: string) => `DATE_FORMAT(${column}, '%Y-%m-%dT%H:%i:%s.%fZ')`;

/**
 * The inbox on MariaDB 10.6+ / MySQL 8.0.29+. Handlers get the mysql2 connection inside the transaction
 * (`tx.query(...)` as in plain mysql2) and write their effects through it.
 */
export class MysqlInboxStore implements InboxStore<MysqlQueryable> {
  readonly tableNames: MysqlInboxTableNames;
  readonly #database: MysqlDatabase;
  readonly #sql: ReturnType<typeof buildStatements>;

  constructor(database: MysqlDatabase, options: MysqlInboxStoreOptions = {}) {
    const resolved = resolveMysqlInboxStoreOptions(options);
    const names = mysqlTableNames(resolved.table, resolved.database);
    this.#database = database;
    this.tableNames = Object.freeze({ table: names.table, inbox: names.outbox, migrations: names.migrations, migrationLock: names.migrationLock });
    this.#sql = buildStatements(this.tableNames.inbox);
  }

  /**
   * The handler's `tx` is the transaction's own mysql2 connection when the database hands it to its
   * transactions (its second argument); a database that does not gets an adapter over its executor.
   */
  transaction<T>(work: (tx: MysqlQueryable) => Promise<T>): Promise<T> {
    return this.#database.transaction((executor: MysqlExecutor, connection?: MysqlQueryable) => work(connection ?? queryableOf(executor)));
  }

  /**
   * `tx`: the mysql2 connection of this store's own `transaction`, or a transaction of the port (an ORM's through
   * its adapter, see `withOrmTransactions`), refused unless its driver vouches for it or the session says it is
   * inside a transaction (the writer's proof) before anything is written.
   */
  claim(tx: OutboxTransaction, entry: InboxEntryRef): Promise<InboxClaim>;
  // the handlers' own type last: `new Inbox(store, ...)` infers the handlers' `tx` from it
  claim(tx: MysqlQueryable, entry: InboxEntryRef): Promise<InboxClaim>;
  async claim(tx: MysqlQueryable | OutboxTransaction, entry: InboxEntryRef): Promise<InboxClaim> {
    if (!isOutboxTransaction(tx)) return this.#claim(mysqlExecutor(tx), entry);
    return claimInTransaction(entry, async () => {
      const transaction = toMysqlTransaction(tx);
      await proveMysqlTransaction(transaction);
      return this.#claim({ query: (sql, params) => transaction.query(sql, params ?? []) }, entry);
    });
  }

  recordFailure(entry: InboxEntryRef, failure: { reason: string; maxAttempts: number; dead: boolean }): Promise<InboxFailureRecord> {
    return this.#database.transaction(async (tx) => {
      const current = await this.#lockEntry(tx, entry);
      if (current.state !== 'failed') return { state: current.state, attempts: current.attempts };
      const attempts = current.attempts + 1;
      const dead = failure.dead || attempts >= failure.maxAttempts;
      await tx.query(this.#sql.markFailed, [failure.reason, dead, dead, entry.consumer, entry.id]);
      return { state: dead ? 'dead' : 'failed', attempts };
    });
  }

  async purgeProcessed(olderThanMs: number, limit: number): Promise<number> {
    return (await this.#database.query(this.#sql.purgeProcessed, [olderThanMs, limit])).affectedRows;
  }

  async stats(consumer?: string): Promise<InboxStats> {
    const row = (await this.#database.query(this.#sql.stats, [consumer ?? null, consumer ?? null])).rows[0];
    return { processed: Number(row?.processed ?? 0), failed: Number(row?.failed ?? 0), dead: Number(row?.dead ?? 0) };
  }

  async listDead(consumer: string, limit: number): Promise<InboxDeadEntry[]> {
    const { rows } = await this.#database.query(this.#sql.listDead, [consumer, limit]);
    return rows.map(inboxDeadEntryOf);
  }

  async purgeDead(consumer: string, ids: readonly string[] | 'all'): Promise<number> {
    if (ids !== 'all') {
      let total = 0;
      for (let at = 0; at < ids.length; at += BULK_BATCH) {
        total += (await this.#database.query(this.#sql.purgeDead, [consumer, ids.slice(at, at + BULK_BATCH)])).affectedRows;
      }
      return total;
    }
    let total = 0;
    for (;;) {
      const deleted = (await this.#database.query(this.#sql.purgeDeadBatch, [consumer, BULK_BATCH])).affectedRows;
      total += deleted;
      if (deleted < BULK_BATCH) return total;
    }
  }

  async migrate(): Promise<void> {
    await runMysqlInboxMigrations(this.#database, this.tableNames);
  }

  migrationSql(): string {
    return mysqlInboxMigrationScript(this.tableNames);
  }

  async close(): Promise<void> {
    await this.#database.close();
  }

  async #claim(tx: MysqlExecutor, entry: InboxEntryRef): Promise<InboxClaim> {
    const current = await this.#lockEntry(tx, entry);
    if (current.state !== 'failed') return { state: current.state, attempts: current.attempts };
    await tx.query(this.#sql.markProcessed, [entry.consumer, entry.id]);
    return { state: 'claimed', attempts: current.attempts + 1 };
  }

  /**
   * Makes sure the entry exists and locks it until the transaction ends: a new one is inserted as a 'failed'
   * placeholder with 0 attempts (never committed as such: the caller settles it in the same transaction), so
   * a new entry and a failed one take the same path. A concurrent copy waits on the row lock, then reads it settled.
   */
  async #lockEntry(tx: MysqlExecutor, entry: InboxEntryRef): Promise<{ state: EntryState; attempts: number }> {
    await tx.query(this.#sql.ensure, [entry.consumer, entry.id, entry.type, entry.topic, entry.key]);
    const row = (await tx.query(this.#sql.lock, [entry.consumer, entry.id])).rows[0];
    // the row was ensured above and is locked by us, so it cannot be missing; a purge could only race a commit
    return row === undefined ? { state: 'processed', attempts: 0 } : { state: row.state as EntryState, attempts: Number(row.attempts) };
  }
}

function buildStatements(t: string) {
  return Object.freeze({
    ensure: `INSERT INTO ${t} (consumer, message_id, type, topic, \`key\`, state, attempts)
      VALUES (?, ?, ?, ?, ?, 'failed', 0)
      ON DUPLICATE KEY UPDATE attempts = attempts`,
    lock: `SELECT state, attempts FROM ${t} WHERE consumer = ? AND message_id = ? FOR UPDATE`,
    markProcessed: `UPDATE ${t} SET state = 'processed', attempts = attempts + 1, processed_at = ${MYSQL_NOW}, updated_at = ${MYSQL_NOW}
      WHERE consumer = ? AND message_id = ?`,
    markFailed: `UPDATE ${t} SET attempts = attempts + 1, last_error = ?, updated_at = ${MYSQL_NOW},
        state = IF(?, 'dead', 'failed'), dead_at = IF(?, ${MYSQL_NOW}, NULL)
      WHERE consumer = ? AND message_id = ?`,
    purgeProcessed: `DELETE FROM ${t}
      WHERE state = 'processed' AND processed_at < TIMESTAMPADD(MICROSECOND, ? * -1000, ${MYSQL_NOW})
      ORDER BY processed_at LIMIT ?`,
    stats: `SELECT COALESCE(SUM(state = 'processed'), 0) AS processed, COALESCE(SUM(state = 'failed'), 0) AS failed,
        COALESCE(SUM(state = 'dead'), 0) AS dead
      FROM ${t} WHERE ? IS NULL OR consumer = ?`,
    listDead: `SELECT consumer, message_id AS id, type, topic, \`key\`, attempts, COALESCE(last_error, '') AS reason,
        ${AS_TEXT('first_seen_at')} AS first_seen_at, ${AS_TEXT('dead_at')} AS dead_at
      FROM ${t} WHERE consumer = ? AND state = 'dead' ORDER BY dead_at, message_id LIMIT ?`,
    purgeDead: `DELETE FROM ${t} WHERE consumer = ? AND state = 'dead' AND message_id IN (?)`,
    purgeDeadBatch: `DELETE FROM ${t} WHERE consumer = ? AND state = 'dead' ORDER BY dead_at LIMIT ?`,
  });
}

const ROW_STATEMENT = /^\s*(?:\(\s*)?(?:SELECT|WITH|SHOW|DESCRIBE|DESC|EXPLAIN|VALUES|TABLE)\b/i;

/** mysql2's result shapes from an executor: rows for a statement that reads, a result header for a write. */
function queryableOf(executor: MysqlExecutor): MysqlQueryable {
  return {
    async query(statement, values) {
      const sql = typeof statement === 'string' ? statement : statement.sql;
      const params = typeof statement === 'string' ? values : (statement.values ?? values);
      const result = await executor.query(sql, params === undefined ? undefined : (params as readonly unknown[]));
      return ROW_STATEMENT.test(sql) ? [result.rows, undefined] : [{ affectedRows: result.affectedRows }, undefined];
    },
  };
}
