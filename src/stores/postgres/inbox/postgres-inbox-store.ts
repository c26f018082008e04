import { randomUUID } from 'node:crypto';
import { isOutboxTransaction, type OutboxTransaction } from '../../../core/ports/outbox-transaction.js';
import { affectedRows, type PgDatabase, type SqlExecutor } from '../database.js';
import { toPgTransaction } from '../pg-transaction.js';
import type { TableName } from '../sql.js';
import { PROBE_SQL } from '../writer-statements.js';
import { notInTransaction, vouchedOpen } from '../../shared/open-transaction.js';
import { claimInTransaction } from '../../../core/inbox-claim.js';
import type { InboxClaim, InboxDeadEntry, InboxEntryRef, InboxFailureRecord, InboxStats, InboxStore } from '../../../core/ports/inbox-store.js';
import { inboxMigrationScript, runInboxMigrations } from './inbox-migrations.js';
import { buildInboxStatements, type InboxStatements } from './inbox-sql.js';
import { nameStatements, runStatement, type NamedStatement } from '../named-statement.js';
import { resolvePostgresInboxStoreOptions, type PostgresInboxStoreOptions } from './postgres-inbox-store-options.js';
import { inboxDeadEntryOf } from '../../shared/inbox-dead-entry.js';

const BULK_BATCH = 1000;

/** The statements of every delivery, parsed and planned once per connection. */
type PerDeliveryStatements = Record<'claim' | 'claimMany' | 'guardedClaim' | 'stateOf' | 'stateOfMany' | 'recordFailure', NamedStatement>;

/**
 * The inbox on PostgreSQL, and on PGlite with the same SQL (`fromPgPool` / `fromPglite`).
 * Handlers get the transaction's `SqlExecutor` and write their effects through it.
 */
export class PostgresInboxStore implements InboxStore<SqlExecutor> {
  readonly tableName: TableName;
  readonly #database: PgDatabase;
  readonly #sql: InboxStatements;
  readonly #perDelivery: PerDeliveryStatements;
  readonly #prepared: boolean;

  constructor(database: PgDatabase, options: PostgresInboxStoreOptions = {}) {
    const resolved = resolvePostgresInboxStoreOptions(options);
    this.#database = database;
    this.tableName = resolved.tableName;
    this.#prepared = resolved.preparedStatements;
    this.#sql = buildInboxStatements(this.tableName);
    const { claim, claimMany, guardedClaim, stateOf, stateOfMany, recordFailure } = this.#sql;
    this.#perDelivery = nameStatements({ claim, claimMany, guardedClaim, stateOf, stateOfMany, recordFailure });
  }

  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.#database.transaction(work);
  }

  /**
   * `tx`: the executor of this store's own `transaction`, or a transaction of the port (an ORM's through its
   * adapter, see `withOrmTransactions`), which is refused unless it is proven open: by its driver, or else by the
   * writer's probe and a claim statement that writes only where the probe's transaction still runs (inbox-sql.ts).
   * A claim that wrote is then in the handler's transaction, and the handler's writes go through the same handle's
   * connection (the port's contract): they commit or roll back together. A refused claim wrote nothing, and the
   * handler does not run.
   */
  claim(tx: OutboxTransaction, entry: InboxEntryRef): Promise<InboxClaim>;
  // the handlers' own type last: `new Inbox(store, ...)` infers the handlers' `tx` from it
  claim(tx: SqlExecutor, entry: InboxEntryRef): Promise<InboxClaim>;
  async claim(tx: SqlExecutor | OutboxTransaction, entry: InboxEntryRef): Promise<InboxClaim> {
    if (!isOutboxTransaction(tx)) return this.#claim(tx, entry);
    return claimInTransaction(entry, async () => {
      const transaction = toPgTransaction(tx);
      const vouched = await vouchedOpen(transaction);
      const executor: SqlExecutor = { query: (text, params) => transaction.query(text, params ?? [], { vouched }) };
      if (vouched) return this.#claim(executor, entry);
      const token = randomUUID();
      await transaction.query(PROBE_SQL, [token]);
      const proven = await this.#run(executor, 'guardedClaim', [entry.consumer, entry.id, entry.type, entry.topic, entry.key, token]);
      const row = proven.rows[0] as { open?: unknown; attempts?: unknown } | undefined;
      if (Number(row?.open) !== 1)
        throw notInTransaction(transaction, 'outside any transaction block (the database ran each statement as a transaction of its own)');
      if (row?.attempts !== null && row?.attempts !== undefined) return { state: 'claimed', attempts: Number(row.attempts) };
      return (await this.#stateOf(executor, entry)) as InboxClaim;
    });
  }

  /**
   * A batch's claims in one statement (and a second one only for ids settled before). Through a transaction of the
   * port, each entry goes through `claim`, which proves that transaction open.
   */
  claimMany(tx: OutboxTransaction, entries: readonly InboxEntryRef[]): Promise<InboxClaim[]>;
  claimMany(tx: SqlExecutor, entries: readonly InboxEntryRef[]): Promise<InboxClaim[]>;
  async claimMany(tx: SqlExecutor | OutboxTransaction, entries: readonly InboxEntryRef[]): Promise<InboxClaim[]> {
    const [first] = entries;
    if (first === undefined) return [];
    if (isOutboxTransaction(tx)) {
      const claims: InboxClaim[] = [];
      for (const entry of entries) claims.push(await this.claim(tx, entry));
      return claims;
    }
    const ids = entries.map((entry) => entry.id.toLowerCase());
    const claimed = await this.#run(tx, 'claimMany', [
      first.consumer,
      ids,
      entries.map((entry) => entry.type),
      entries.map((entry) => entry.topic),
      entries.map((entry) => entry.key),
    ]);
    const found = new Map<string, InboxClaim>();
    for (const row of claimed.rows as { id: string; attempts: number }[]) found.set(row.id, { state: 'claimed', attempts: row.attempts });
    const settled = ids.filter((id) => !found.has(id));
    if (settled.length > 0) {
      const states = await this.#run(tx, 'stateOfMany', [first.consumer, settled]);
      for (const row of states.rows as { id: string; state: 'processed' | 'dead'; attempts: number }[])
        found.set(row.id, { state: row.state, attempts: row.attempts });
    }
    // An id neither claimed nor found was purged meanwhile, as in `#stateOf`.
    return ids.map((id) => found.get(id) ?? { state: 'processed', attempts: 0 });
  }

  async #claim(tx: SqlExecutor, entry: InboxEntryRef): Promise<InboxClaim> {
    const claimed = await this.#run(tx, 'claim', [entry.consumer, entry.id, entry.type, entry.topic, entry.key]);
    const row = claimed.rows[0] as { attempts: number } | undefined;
    if (row !== undefined) return { state: 'claimed', attempts: row.attempts };
    return (await this.#stateOf(tx, entry)) as InboxClaim;
  }

  async recordFailure(entry: InboxEntryRef, failure: { reason: string; maxAttempts: number; dead: boolean }): Promise<InboxFailureRecord> {
    const result = await this.#run(this.#database, 'recordFailure', [
      entry.consumer,
      entry.id,
      entry.type,
      entry.topic,
      entry.key,
      failure.reason,
      failure.dead,
      failure.maxAttempts,
    ]);
    const row = result.rows[0] as { state: 'failed' | 'dead'; attempts: number } | undefined;
    if (row !== undefined) return { state: row.state, attempts: row.attempts };
    return await this.#stateOf(this.#database, entry);
  }

  async purgeProcessed(olderThanMs: number, limit: number): Promise<number> {
    return affectedRows(await this.#database.query(this.#sql.purgeProcessed, [olderThanMs, limit]));
  }

  async stats(consumer?: string): Promise<InboxStats> {
    const row = (await this.#database.query(this.#sql.stats, [consumer ?? null])).rows[0] as InboxStats;
    return { processed: Number(row.processed), failed: Number(row.failed), dead: Number(row.dead) };
  }

  async listDead(consumer: string, limit: number): Promise<InboxDeadEntry[]> {
    const result = await this.#database.query(this.#sql.listDead, [consumer, limit]);
    return (result.rows as Record<string, unknown>[]).map(inboxDeadEntryOf);
  }

  async purgeDead(consumer: string, ids: readonly string[] | 'all'): Promise<number> {
    if (ids !== 'all') return affectedRows(await this.#database.query(this.#sql.purgeDead, [consumer, ids]));
    let total = 0;
    for (;;) {
      const deleted = affectedRows(await this.#database.query(this.#sql.purgeDeadBatch, [consumer, BULK_BATCH]));
      total += deleted;
      if (deleted < BULK_BATCH) return total;
    }
  }

  async migrate(): Promise<void> {
    await runInboxMigrations(this.#database, this.tableName);
  }

  migrationSql(): string {
    return inboxMigrationScript(this.tableName);
  }

  async close(): Promise<void> {
    await this.#database.close();
  }

  #run(executor: SqlExecutor, statement: keyof PerDeliveryStatements, params: unknown[]) {
    return runStatement(executor, this.#perDelivery[statement], params, this.#prepared);
  }

  async #stateOf(executor: SqlExecutor, entry: InboxEntryRef): Promise<{ state: 'processed' | 'dead' | 'failed'; attempts: number }> {
    const row = (await this.#run(executor, 'stateOf', [entry.consumer, entry.id])).rows[0] as
      { state: 'processed' | 'dead' | 'failed'; attempts: number } | undefined;
    // The statements above only skip a row that exists and is settled; a vanished row means a concurrent purge.
    return row ?? { state: 'processed', attempts: 0 };
  }
}
