import { z } from 'zod';
import { ConfigurationError, OutboxerError } from '../core/errors.js';
import { parseOptions } from '../core/parse-options.js';
import { isOutboxTransaction, type OutboxTransaction } from '../core/ports/outbox-transaction.js';
import { INBOX_TRANSACTION_FIX } from '../core/inbox-claim.js';
import type { InboxClaim, InboxEntryRef, InboxStore } from '../core/ports/inbox-store.js';

/**
 * An inbox store whose `claim` also runs in a transaction of the port: `PostgresInboxStore`, `MysqlInboxStore`
 * and `SqliteInboxStore` are. Its own `transaction` is not used: the ORM's takes its place.
 */
export type PortClaimingInboxStore = Omit<InboxStore, 'transaction' | 'claim'> & {
  claim(tx: OutboxTransaction, entry: InboxEntryRef): Promise<InboxClaim>;
};

export interface OrmTransactionsOptions<OrmTx> {
  /**
   * Runs `work` in a new transaction of the ORM, handing it that transaction's own handle; commits when `work`
   * resolves and rolls back when it rejects, as the ORM's transaction helpers do:
   * `(work) => db.transaction().execute(work)` (Kysely), `(work) => prisma.$transaction(work)` (Prisma).
   */
  readonly transaction: (work: (tx: OrmTx) => Promise<unknown>) => Promise<unknown>;
  /** The ORM's adapter to the transaction port: `fromKysely`, `fromPrisma`, `fromKnex`, ... */
  readonly adapt: (tx: NoInfer<OrmTx>) => OutboxTransaction;
}

/** The options as checked, frozen: both are required, with no defaults. */
export type ResolvedOrmTransactionsOptions<OrmTx> = Readonly<OrmTransactionsOptions<OrmTx>>;

/** Zod sees only that each is a function: their parameters are the ORM's, which it cannot check. */
const ormTransactionsOptionsSchema = z
  .object(
    {
      transaction: z.custom<(work: (tx: never) => Promise<unknown>) => Promise<unknown>>((value) => typeof value === 'function', {
        error: (issue) =>
          `must be a function running work in the ORM's transaction, e.g. (work) => db.transaction().execute(work); got ${describe(issue.input)}`,
      }),
      adapt: z.custom<(tx: never) => OutboxTransaction>((value) => typeof value === 'function', {
        error: (issue) => `must be the ORM's adapter to the transaction port, e.g. fromKysely; got ${describe(issue.input)}`,
      }),
    },
    { error: (issue) => (issue.code === 'invalid_type' ? `must be { transaction, adapt }, got ${describe(issue.input)}` : undefined) },
  )
  .strict();

const STORE_METHODS = ['claim', 'recordFailure', 'purgeProcessed', 'stats', 'listDead', 'purgeDead', 'migrate', 'migrationSql', 'close'] as const;

/**
 * The inbox over an ORM's own transactions: each message is handled in `transaction`, the store claims its entry
 * through `adapt(tx)` in that same transaction, and the handler gets the ORM's `tx` itself, so its writes through
 * the ORM and the claim commit or roll back together. Everything outside the handler's transaction (failures,
 * retention, operators) stays with `store`, on its own connections.
 *
 * `OrmTx` is the ORM's transaction type, given explicitly (the handlers' `tx`):
 * `withOrmTransactions<Transaction<Database>>(store, { transaction: (work) => db.transaction().execute(work), adapt: fromKysely })`.
 */
export function withOrmTransactions<OrmTx>(store: PortClaimingInboxStore, options: OrmTransactionsOptions<OrmTx>): InboxStore<OrmTx> {
  checkStore(store);
  const { transaction, adapt } = resolveOrmTransactionsOptions(options);
  return Object.freeze({
    async transaction<T>(work: (tx: OrmTx) => Promise<T>): Promise<T> {
      let outcome: { readonly value: T } | undefined;
      await transaction(async (tx) => {
        outcome = { value: await work(tx) };
      });
      // an ORM helper that resolved without running work (or before it finished) claimed nothing and committed nothing of it
      if (outcome === undefined)
        throw new ConfigurationError(
          'OUTBOXER_INVALID_OPTION',
          'withOrmTransactions: option transaction resolved before the work it was given had run: it must return the promise of the ORM transaction that runs it',
          { options: ['transaction'] },
        );
      return outcome.value;
    },
    async claim(tx: OrmTx, entry: InboxEntryRef): Promise<InboxClaim> {
      const adapted: unknown = adapt(tx);
      if (!isOutboxTransaction(adapted)) {
        // a raw driver handle here would be taken as the store's own transaction, unproven: refuse it
        throw new OutboxerError(
          'OUTBOXER_NOT_IN_TRANSACTION',
          `withOrmTransactions: option adapt returned ${describe(adapted)}, not a transaction of the port (fromKysely(trx), fromPrisma(tx), ...): nothing was claimed and no handler ran. ${INBOX_TRANSACTION_FIX}`,
        );
      }
      return store.claim(adapted, entry);
    },
    recordFailure: (entry, failure) => store.recordFailure(entry, failure),
    purgeProcessed: (olderThanMs, limit) => store.purgeProcessed(olderThanMs, limit),
    stats: (consumer) => store.stats(consumer),
    listDead: (consumer, limit) => store.listDead(consumer, limit),
    purgeDead: (consumer, ids) => store.purgeDead(consumer, ids),
    migrate: () => store.migrate(),
    migrationSql: () => store.migrationSql(),
    close: () => store.close(),
  } satisfies InboxStore<OrmTx>);
}

function checkStore(store: unknown): void {
  const candidate = (typeof store === 'object' && store !== null ? store : {}) as Record<string, unknown>;
  const missing = STORE_METHODS.filter((name) => typeof candidate[name] !== 'function');
  if (missing.length > 0) {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_OPTION',
      `withOrmTransactions: the store must be an inbox store (PostgresInboxStore, MysqlInboxStore, SqliteInboxStore); ${describe(store)} has no ${missing.join(', ')}`,
    );
  }
}

/** Checks the options once (ConfigurationError naming the option and the fix) and freezes them. */
export function resolveOrmTransactionsOptions<OrmTx>(input: OrmTransactionsOptions<OrmTx>): ResolvedOrmTransactionsOptions<OrmTx> {
  parseOptions(ormTransactionsOptionsSchema, input, 'withOrmTransactions');
  // The functions as given, typed by OrmTx: the parsed ones are the same values, typed only as far as zod can check.
  return Object.freeze({ transaction: input.transaction, adapt: input.adapt });
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'function') return 'a function';
  if (typeof value !== 'object') return typeof value;
  return `an object (${(value as { constructor?: { name?: string } }).constructor?.name ?? 'no class'})`;
}
