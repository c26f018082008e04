/**
 * `outboxer/prisma`: a Prisma interactive transaction as the outbox's transaction (Prisma 7 with a driver
 * adapter), on PostgreSQL, MariaDB/MySQL and SQLite.
 *
 * @example
 * await outbox.transaction(() =>
 *   prisma.$transaction(async (tx) => {
 *     await tx.order.create({ data: { id: 7, note: 'first' } });
 *     await outbox.enqueue(fromPrisma(tx), { topic: 'orders', type: 'order.created', payload: { id: 7 } });
 *   }),
 * );
 *
 * Prisma is an optional peer dependency: this module imports nothing of it, not even its types (they are
 * generated per schema).
 */
import { ConfigurationError, OutboxerError } from '../../core/errors.js';
import {
  defineTransaction,
  type OutboxTransaction,
  type SqlDialect,
  type SqlQueryOptions,
  type SqlRows,
  type TransactionStatus,
} from '../../core/ports/outbox-transaction.js';
import { returnsRows } from './returns-rows.js';

/**
 * What `fromPrisma` takes: the `tx` that `prisma.$transaction(async (tx) => ...)` gives its callback. Prisma
 * removes `$connect` and `$disconnect` from it; the root `PrismaClient` (extended or not) has them, so passing
 * it does not compile.
 */
export interface PrismaTransactionClient {
  $queryRawUnsafe(query: string, ...values: unknown[]): PromiseLike<unknown>;
  $executeRawUnsafe(query: string, ...values: unknown[]): PromiseLike<number>;
  readonly $connect?: never;
  readonly $disconnect?: never;
}

export interface FromPrismaOptions {
  /**
   * The database, for a client whose own cannot be read (it is read from the driver adapter's `provider`, or the
   * schema's datasource provider). When both are known they must agree.
   */
  readonly dialect?: SqlDialect;
}

const SOURCE = 'a Prisma transaction client';

/** How to pass an open transaction with Prisma: shown in every `OUTBOXER_NOT_IN_TRANSACTION` about this adapter. */
export const PRISMA_FIX =
  'Pass the tx of an interactive transaction, inside its callback: await prisma.$transaction(async (tx) => { await outbox.enqueue(fromPrisma(tx), message); }).';

/** The providers a driver adapter (`postgres`, `mysql`, `sqlite`) or a schema (`postgresql`, ...) names, and their dialect. */
const DIALECT_OF_PROVIDER: Readonly<Record<string, SqlDialect>> = { postgres: 'postgres', postgresql: 'postgres', mysql: 'mysql', sqlite: 'sqlite' };

/** Where Prisma (7.5+) keeps an interactive transaction's scope on its client: absent on the root client. */
const TRANSACTION_SCOPE = Symbol.for('prisma.client.transaction.scope_context');

/**
 * The caller's Prisma interactive transaction as outboxer's stores take it: `outbox.enqueue(fromPrisma(tx), message)`.
 * Statements run through the transaction's own raw API (`tx.$queryRawUnsafe` for statements that answer with rows,
 * `tx.$executeRawUnsafe` for the others), so they run on its connection, with the dialect's placeholders.
 *
 * Prisma says nothing of the database transaction itself, so `status()` is `undefined` while the callback runs and
 * the store proves the transaction open in the database; it is `'closed'` once Prisma has ended the transaction
 * (or the nested one) this client belongs to. Refused with `OUTBOXER_NOT_IN_TRANSACTION`: at once, the root
 * `PrismaClient` (also a type error) and a `tx` kept after its transaction ended; at its first statement, a `tx`
 * whose transaction Prisma rolled back when its `timeout` passed.
 */
export function fromPrisma(tx: PrismaTransactionClient, options: FromPrismaOptions = {}): OutboxTransaction {
  const client = transactionClient(tx);
  if (scopeStatus(client) === 'closed') throw notInTransaction('a transaction client whose transaction has already ended (committed or rolled back)');
  const dialect = dialectOf(client, options.dialect);
  return defineTransaction({
    dialect,
    source: SOURCE,
    fix: PRISMA_FIX,
    async query(sql: string, params: readonly unknown[], options?: SqlQueryOptions): Promise<SqlRows> {
      if (scopeStatus(client) === 'closed') throw notInTransaction('a transaction client whose transaction has ended');
      // status() never says 'open' (Prisma keeps no word on the database transaction), so nothing could confirm one
      if (options?.vouched === true)
        throw notInTransaction('a statement sent as vouched for, which this adapter never vouches (Prisma says nothing of the database transaction)');
      try {
        if (returnsRows(sql, dialect)) {
          const rows = await client.$queryRawUnsafe(sql, ...params);
          if (!Array.isArray(rows)) throw new TypeError(`Prisma's $queryRawUnsafe answered ${typeof rows}, not rows`);
          return { rows: rows as Record<string, unknown>[], affectedRows: rows.length };
        }
        return { rows: [], affectedRows: await client.$executeRawUnsafe(sql, ...params) };
      } catch (error) {
        throw endedByPrisma(error) ?? error;
      }
    },
    status: (): TransactionStatus | undefined => scopeStatus(client),
  });
}

/** The handle as a transaction client, or a refusal naming the fix for the root client or anything else. */
function transactionClient(handle: unknown): PrismaTransactionClient {
  const fields = typeof handle === 'object' && handle !== null ? (handle as Record<string, unknown>) : {};
  if (typeof fields.$connect === 'function' || typeof fields.$disconnect === 'function') {
    throw notInTransaction('the root PrismaClient, which runs each statement outside any transaction');
  }
  if (typeof fields.$queryRawUnsafe !== 'function' || typeof fields.$executeRawUnsafe !== 'function') {
    throw notInTransaction('something that is not a Prisma transaction client');
  }
  return handle as PrismaTransactionClient;
}

/**
 * `'closed'` once the interactive transaction (or nested transaction) this client was made for has ended: Prisma
 * keeps a stack of the scopes still running. Anything else, or another Prisma version's shape, tells nothing.
 */
function scopeStatus(client: PrismaTransactionClient): 'closed' | undefined {
  const scope = field(client, TRANSACTION_SCOPE);
  const scopeId = field(scope, 'scopeId');
  const stack = field(field(scope, 'scopeState'), 'stack');
  if (field(scope, 'kind') !== 'nested' || typeof scopeId !== 'string' || !Array.isArray(stack)) return undefined;
  return stack.includes(scopeId) ? undefined : 'closed';
}

/**
 * The dialect of the driver adapter's `provider` (`postgres`, `mysql`, `sqlite`), else of the schema's datasource
 * provider, else the caller's; a provider outboxer has no store for is refused.
 */
function dialectOf(client: PrismaTransactionClient, requested: SqlDialect | undefined): SqlDialect {
  const adapterProvider = field(field(field(client, '_engineConfig'), 'adapter'), 'provider');
  const schemaProvider = field(client, '_activeProvider');
  const providers = [adapterProvider, schemaProvider].filter((provider): provider is string => typeof provider === 'string');
  const unsupported = providers.find((provider) => DIALECT_OF_PROVIDER[provider] === undefined);
  if (unsupported !== undefined) {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_OPTION',
      `fromPrisma supports Prisma clients on PostgreSQL (provider "postgresql"), MariaDB/MySQL ("mysql") and SQLite ("sqlite"); this client's provider is "${unsupported}"`,
    );
  }
  const detected = providers.map((provider) => DIALECT_OF_PROVIDER[provider])[0];
  if (detected !== undefined && requested !== undefined && detected !== requested) {
    throw new ConfigurationError('OUTBOXER_INVALID_OPTION', `fromPrisma was told dialect '${requested}', but this Prisma client runs on '${detected}'`, {
      options: ['dialect'],
    });
  }
  const dialect = detected ?? requested;
  if (dialect === undefined) {
    throw new ConfigurationError(
      'OUTBOXER_INVALID_OPTION',
      "fromPrisma cannot tell this Prisma client's database: pass it, fromPrisma(tx, { dialect: 'postgres' }) ('mysql' for MariaDB/MySQL, 'sqlite')",
      { options: ['dialect'] },
    );
  }
  return dialect;
}

/**
 * Prisma's P2028 ("Transaction API error") on a statement: the transaction is gone (committed, rolled back, or
 * expired past its `timeout` and rolled back by Prisma), which its scope cannot show.
 */
function endedByPrisma(error: unknown): OutboxerError | undefined {
  if (field(error, 'code') !== 'P2028' || !(error instanceof Error)) return undefined;
  const reason =
    error.message
      .split('\n')
      .filter((line) => line.trim() !== '')
      .at(-1) ?? error.message;
  return new OutboxerError(
    'OUTBOXER_NOT_IN_TRANSACTION',
    `fromPrisma got a transaction client whose transaction Prisma has ended (${reason.trim()}). ${PRISMA_FIX}`,
    { cause: error },
  );
}

function field(value: unknown, key: string | symbol): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string | symbol, unknown>)[key] : undefined;
}

function notInTransaction(what: string): OutboxerError {
  return new OutboxerError('OUTBOXER_NOT_IN_TRANSACTION', `fromPrisma got ${what}. ${PRISMA_FIX}`);
}
