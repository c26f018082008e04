import type pg from 'pg';
import type { ContenderWriter, RelayContender } from '../contenders/contender.js';
import { LatencyHistogram } from '../measure/latency-histogram.js';

export interface WriterRun {
  /** Transactions committed. */
  readonly commits: number;
  /** Messages committed (commits x perTransaction). */
  readonly messages: number;
  readonly seconds: number;
  /** BEGIN → enqueue → COMMIT, as the application sees it. */
  readonly transactionLatency: LatencyHistogram;
  readonly errors: number;
  readonly lastError: string | undefined;
}

export interface WriterOptions {
  /** Where the writers connect, unless the contender brings its own database (`contender.writer`). */
  readonly pool: pg.Pool;
  readonly contender: RelayContender;
  readonly connections: number;
  readonly seconds: number;
  /** Total messages per second across writers; undefined = as fast as they can (closed loop). */
  readonly rate?: number | undefined;
  /** Messages enqueued per transaction (one enqueue call each). Default 1. */
  readonly perTransaction?: number | undefined;
  /** Message numbers start here (keys follow them). */
  readonly firstMessage?: number | undefined;
  /** After each COMMIT returned: the id committed. */
  readonly onCommit?: ((id: string) => void) | undefined;
}

/** A writer on a client of the bench's PostgreSQL pool: the contender's transaction runner, or BEGIN, enqueues, COMMIT, after-commit call. */
function pgWriter(client: pg.PoolClient, contender: RelayContender): ContenderWriter {
  return {
    async commit(first, count) {
      const ids: string[] = [];
      const enqueueAll = async (tx: pg.PoolClient) => {
        for (let n = first; n < first + count; n++) ids.push(await contender.enqueue(tx, n));
      };
      try {
        if (contender.transaction !== undefined) {
          await contender.transaction(client, enqueueAll);
        } else {
          await client.query('BEGIN');
          await enqueueAll(client);
          await client.query('COMMIT');
          contender.committed();
        }
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
      return ids;
    },
    release: () => client.release(),
  };
}

/**
 * Writers, each on its own connection, doing what an application does: BEGIN, one enqueue, COMMIT, then
 * the contender's after-commit call. Open loop at `rate` (each writer keeps its own schedule and catches
 * up when late, so a slow commit does not lower the offered load) or closed loop without it.
 */
export async function runWriters(options: WriterOptions): Promise<WriterRun> {
  const { pool, contender, connections, seconds, rate, onCommit } = options;
  const perTransaction = options.perTransaction ?? 1;
  const transactionLatency = new LatencyHistogram();
  let next = options.firstMessage ?? 0;
  let commits = 0;
  let errors = 0;
  let lastError: string | undefined;
  const started = performance.now();
  const end = started + seconds * 1000;
  const writer = async (index: number): Promise<void> => {
    const connection = contender.writer === undefined ? pgWriter(await pool.connect(), contender) : await contender.writer();
    try {
      const interval = rate === undefined ? 0 : (1000 * connections * perTransaction) / rate;
      let due = started + (interval * index) / connections;
      while (performance.now() < end) {
        if (rate !== undefined) {
          const wait = due - performance.now();
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          if (performance.now() >= end) break;
          due += interval;
        }
        const begun = performance.now();
        const first = next;
        next += perTransaction;
        try {
          const ids = await connection.commit(first, perTransaction);
          transactionLatency.record(performance.now() - begun);
          commits++;
          if (onCommit !== undefined) for (const id of ids) onCommit(id);
        } catch (error) {
          errors++;
          lastError = error instanceof Error ? error.message : String(error);
        }
      }
    } finally {
      connection.release();
    }
  };
  await Promise.all(Array.from({ length: connections }, (_, index) => writer(index)));
  return { commits, messages: commits * perTransaction, seconds: (performance.now() - started) / 1000, transactionLatency, errors, lastError };
}
