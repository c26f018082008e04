import { OutboxerError } from '../../core/errors.js';
import { defineTransaction, type OutboxTransaction, type TransactionStatus } from '../../core/ports/outbox-transaction.js';

/** The parts of a node-postgres `Client` or `PoolClient` a transaction handle uses: no runtime import of `pg`. */
export interface PgClientLike {
  query(config: { text: string; values?: unknown[]; name?: string }): Promise<{ rows: unknown[]; rowCount?: number | null }>;
  /** pg 8.16+: the status of the last ReadyForQuery message (`I` idle, `T` in a transaction, `E` failed). */
  getTransactionStatus?(): string | null;
}

/** node-postgres clients carry these (PGlite and other executors do not). */
export function isPgClient(value: object): value is PgClientLike {
  const candidate = value as Record<string, unknown>;
  return typeof candidate.query === 'function' && typeof candidate.connectionParameters === 'object' && typeof candidate.connection === 'object';
}

/**
 * What the protocol said of the client's transaction at its last ReadyForQuery. Only an idle client that has seen
 * the ReadyForQuery of its last statement vouches: a statement still queued (a COMMIT that was not awaited) would
 * run before ours, so then nothing is vouched for and the store asks the database.
 */
export function pgClientStatus(client: PgClientLike): TransactionStatus | undefined {
  const queue = client as { _queryQueue?: unknown; _activeQuery?: unknown; readyForQuery?: unknown };
  if (!Array.isArray(queue._queryQueue) || queue._queryQueue.length > 0 || (queue._activeQuery ?? null) !== null) return undefined;
  // a failed statement's promise rejects at its ErrorResponse, before the ReadyForQuery that carries the new status:
  // until that arrives, the status is the one from before (a failed COMMIT would still say `T`)
  if (queue.readyForQuery !== true) return undefined;
  const status = typeof client.getTransactionStatus === 'function' ? client.getTransactionStatus() : undefined;
  if (status === 'T') return 'open';
  if (status === 'I') return 'closed';
  if (status === 'E') return 'failed';
  return undefined;
}

/** A node-postgres client as a transaction handle: its statements may be prepared by name, its status vouches. */
export function pgClientTransaction(client: PgClientLike, describe: { readonly source: string; readonly fix: string }): OutboxTransaction<'postgres'> {
  return defineTransaction({
    dialect: 'postgres',
    ...describe,
    async query(text, params, options) {
      const values = [...params];
      // checked in the tick that queues the statement: nothing the caller queues later can run before it
      if (options?.vouched === true && pgClientStatus(client) !== 'open') {
        throw new OutboxerError(
          'OUTBOXER_NOT_IN_TRANSACTION',
          `enqueue was given ${describe.source} whose transaction ended before the enqueue's statements ran (an enqueue not awaited?): nothing was written. ${describe.fix}`,
        );
      }
      const result = await client.query(options?.name === undefined ? { text, values } : { name: options.name, text, values });
      return { rows: result.rows as Record<string, unknown>[], affectedRows: result.rowCount ?? 0 };
    },
    status: () => pgClientStatus(client),
  });
}
